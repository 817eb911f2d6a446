"""``clarigate admin`` when Redis refuses ``REDIS_URL`` (a wrong password, a database index out of
range) or does not answer: one line as ``serve`` says it, naming REDIS_URL with what to do, and
serve's exit codes (4 refused, 3 not reachable); the password never printed."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    ("url", "code", "said"),
    [
        ("redis://clarigate:hunter2@127.0.0.1:6379/0", 4, "refused us (invalid username-password pair"),
        ("redis://127.0.0.1:6379/99", 4, "refused us (DB index is out of range)"),
    ],
)
async def test_redis_refusing_the_url_names_redis_url_as_serve_does(
    cli, monkeypatch: pytest.MonkeyPatch, url: str, code: int, said: str
) -> None:
    """Exit 4 and serve's advice, the password masked: not a bare "Redis: invalid
    username-password pair" under exit 3 ("unreachable")."""
    monkeypatch.setenv("REDIS_URL", url)
    got, out = await cli("some-bot", "threads", as_json=False)
    assert got == code, out
    assert said in out and "put the right password (and database) in REDIS_URL" in out
    assert "hunter2" not in out


async def test_redis_not_answering_says_where_and_what_to_look_at(cli, monkeypatch, unused_tcp_port) -> None:
    monkeypatch.setenv("REDIS_URL", f"redis://127.0.0.1:{unused_tcp_port}/0")
    got, out = await cli("some-bot", "backlog", as_json=False)
    assert got == 3
    assert out.strip() == (
        f"clarigate admin: Redis at redis://127.0.0.1:{unused_tcp_port}/0 is not reachable: "
        f"127.0.0.1:{unused_tcp_port} refused the connection. Is Redis running there?"
    )
