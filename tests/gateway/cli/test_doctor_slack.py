"""``clarigate doctor`` on Slack's credentials: the app token is checked the way Slack documents
it (``apps.connections.open``), and what Slack needs is said one way everywhere: the bot token,
plus either the signing secret (HTTP) or the app token (Socket Mode)."""

from __future__ import annotations

import pytest

from clarigate.gateway.cli.main import main
from clarigate.gateway.runtime.preflight import ExitCode
from tests.adapters.slack.fake_slack import APP_TOKEN, BOT_TOKEN, FakeSlack
from tests.deploy.test_processes import fake_slack  # noqa: F401 (the fake Slack, served from a thread)

#: what the line says to look at (the serve line says it alike)
APP_TOKEN_IS = "the app-level token (xapp-…, scope connections:write), under Basic Information"

pytestmark = pytest.mark.usefixtures("clean_environment")  # tests/gateway/conftest.py

OPEN = "apps.connections.open"
NEEDS = "SLACK_BOT_TOKEN plus either SLACK_SIGNING_SECRET (HTTP) or SLACK_APP_TOKEN (Socket Mode)"


def _lines(out: str, kind: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith(kind)]


def socket_mode(monkeypatch: pytest.MonkeyPatch, fake: FakeSlack, app_token: str) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)  # a bot token Slack takes
    monkeypatch.setenv("SLACK_APP_TOKEN", app_token)
    monkeypatch.setenv("SLACK_API_URL", fake.api_url)


def test_an_app_token_slack_refuses_is_a_problem(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    fake_slack: FakeSlack,  # noqa: F811
) -> None:
    socket_mode(monkeypatch, fake_slack, "xapp-1-A1-FAKE")
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert _lines(out, "PROBLEM") == [
        f"PROBLEM slack: Slack rejected SLACK_APP_TOKEN (invalid_auth): check {APP_TOKEN_IS}"
    ]
    assert "credentials accepted" not in out and "everything looks right" not in out


def test_the_bot_token_in_the_app_token_variable_is_told_where_the_app_token_is(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    fake_slack: FakeSlack,  # noqa: F811
) -> None:
    """The usual mix-up: the xoxb- token pasted into SLACK_APP_TOKEN too. Slack answers
    ``not_allowed_token_type``; the line says which token goes there and where it is found."""
    socket_mode(monkeypatch, fake_slack, BOT_TOKEN)
    assert main(["doctor"]) == 1
    assert _lines(capsys.readouterr().out, "PROBLEM") == [
        f"PROBLEM slack: Slack rejected SLACK_APP_TOKEN (not_allowed_token_type): check {APP_TOKEN_IS}"
    ]


def test_an_app_token_slack_takes_is_checked_and_accepted(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    fake_slack: FakeSlack,  # noqa: F811
) -> None:
    socket_mode(monkeypatch, fake_slack, APP_TOKEN)
    assert main(["doctor"]) == 0
    assert "ok      slack: credentials accepted" in capsys.readouterr().out
    assert [c.answer["ok"] for c in fake_slack.attempts(OPEN)] == [True]  # asked, as Slack documents


def test_the_app_token_alone_is_told_the_bot_token_is_needed_too(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not "needs SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET (HTTP) or SLACK_APP_TOKEN", which
    reads as if the app token alone were enough: doctor and serve say it alike."""
    monkeypatch.setenv("SLACK_APP_TOKEN", "xapp-1-A1-only")
    assert main(["doctor"]) == 1
    said = f"slack: SLACK_APP_TOKEN is set but the platform needs {NEEDS}"
    assert _lines(capsys.readouterr().out, "PROBLEM") == [f"PROBLEM {said}"]
    assert main(["serve", "--host", "127.0.0.1", "--port", "0"]) == ExitCode.CONFIG
    assert said in capsys.readouterr().err


def test_no_platform_enabled_names_slacks_bot_token_for_either_way(capsys: pytest.CaptureFixture[str]):
    assert main(["doctor"]) == 0
    (note,) = [line for line in _lines(capsys.readouterr().out, "note") if "no platform is enabled" in line]
    assert f"set {NEEDS}; or " in note
