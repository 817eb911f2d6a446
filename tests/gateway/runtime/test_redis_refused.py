"""A Redis or Redis Sentinel that refuses our password (WRONGPASS, NOAUTH) stops ``serve`` at
once (exit 4) in one line that never shows the password, and ``doctor`` says the same; only an
unreachable store is waited for.

Against a master and a Sentinel of the test's own, both requiring a password, on free ports
(skipped without a redis-server binary).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from clarigate.gateway.cli.doctor import redis_problem
from clarigate.gateway.runtime.preflight import ExitCode, StartFailure, wait_for_redis

from ..store.test_store_connection import free_port, listening, plain, redis_binary, redis_server

WRONG = "not-the-pw-4711"


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, int]]:
    """A master requiring ``m-pw`` and a Sentinel watching it requiring ``s-pw``: their ports."""
    folder = tmp_path_factory.mktemp("guarded")
    master, sentinel = free_port(), free_port()
    conf = folder / "sentinel.conf"
    conf.write_text(
        f"port {sentinel}\nbind 127.0.0.1\ndir {folder}\nrequirepass s-pw\n"
        f"sentinel monitor clarigate 127.0.0.1 {master} 1\nsentinel auth-pass clarigate m-pw\n"
    )
    (folder / "m").mkdir()
    with (
        redis_server(plain(master, folder / "m", "--requirepass", "m-pw"), lambda: listening(master)),
        redis_server([redis_binary(), str(conf), "--sentinel"], lambda: listening(sentinel)),
    ):
        yield master, sentinel


def urls(master: int, sentinel: int) -> dict[str, str]:
    """Each way of getting the password wrong -> the URL; what the advice names."""
    return {
        "sentinel, wrong password": f"redis+sentinel://:m-pw@127.0.0.1:{sentinel}/clarigate"
        f"?sentinel_password={WRONG}",
        "sentinel, no password": f"redis+sentinel://:m-pw@127.0.0.1:{sentinel}/clarigate",
        "master, wrong password": f"redis+sentinel://:{WRONG}@127.0.0.1:{sentinel}/clarigate"
        "?sentinel_password=s-pw",
        "redis, wrong password": f"redis://:{WRONG}@127.0.0.1:{master}/0",
        "redis, no password": f"redis://127.0.0.1:{master}/0",
    }


@pytest.mark.parametrize("case", list(urls(0, 0)))
async def test_a_refused_password_stops_the_start_at_once(guarded: tuple[int, int], case: str) -> None:
    url = urls(*guarded)[case]
    started = time.monotonic()
    with pytest.raises(StartFailure) as failure:
        await wait_for_redis(url, 30)  # a store merely unreachable would be waited for 30 s
    assert time.monotonic() - started < 10
    assert failure.value.code == ExitCode.STORE_REFUSED
    line = failure.value.message
    assert "\n" not in line and WRONG not in line and "m-pw" not in line and "s-pw" not in line
    assert " refused us (" in line and "not reachable" not in line
    assert line.endswith("(?sentinel_password=…)") == case.startswith("sentinel"), line


@pytest.mark.parametrize("case", list(urls(0, 0)))
async def test_doctor_says_the_store_refused_us(guarded: tuple[int, int], case: str) -> None:
    url = urls(*guarded)[case]
    problem = await redis_problem(url)
    assert problem is not None and " refused us (" in problem and "not reachable" not in problem
    assert WRONG not in problem and "-pw" not in problem
    with pytest.raises(StartFailure) as failure:
        await wait_for_redis(url, 0)
    assert problem == failure.value.message  # serve's words


async def test_the_right_passwords_pass(guarded: tuple[int, int]) -> None:
    master, sentinel = guarded
    await wait_for_redis(f"redis+sentinel://:m-pw@127.0.0.1:{sentinel}/clarigate?sentinel_password=s-pw", 5)
    await wait_for_redis(f"redis://:m-pw@127.0.0.1:{master}/0", 5)
    assert await redis_problem(f"redis://:m-pw@127.0.0.1:{master}/0") is None


def test_a_sentinel_it_cannot_reach_is_still_waited_for(tmp_path: Path) -> None:
    """Only a refusal stops at once: a Sentinel port nothing listens on is an outage."""
    import asyncio

    url = f"redis+sentinel://127.0.0.1:{free_port()}/clarigate"
    with pytest.raises(StartFailure) as failure:
        asyncio.run(wait_for_redis(url, 0))
    assert failure.value.code == ExitCode.STORE_UNREACHABLE
