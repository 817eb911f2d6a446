"""What an operator sets wrong is said as configuration, naming the setting, and what ``serve``
could not reach is named with where it looked (the exit codes: README.md and deploy/README.md,
"The contract")."""

from __future__ import annotations

import json
import time

import pytest

from clarigate.gateway.boundary import retry
from clarigate.gateway.cli.main import main
from clarigate.gateway.runtime.preflight import ExitCode

from .test_serve_failures import clean_environment, serve, the_error  # noqa: F401 (a fixture)

PASSWORD = "hunter2-Xq7"


@pytest.mark.parametrize(
    ("url", "said"),
    [
        (f"mysql://bot:{PASSWORD}@db.internal/threads", "CHECKPOINTER_URL: unknown scheme 'mysql:'"),
        (f"redis://:{PASSWORD}@127.0.0.1:6379/0", "CHECKPOINTER_URL=redis://… is not offered"),
    ],
)
def test_a_checkpointer_scheme_not_offered_is_configuration_before_the_agent_loads(
    monkeypatch, capsys, url, said
):
    monkeypatch.setenv("CHECKPOINTER_URL", url)
    monkeypatch.setenv("LLM_MODEL", "no-such-provider:model")  # a model that would stop the start (6)
    assert main(["serve", "--host", "127.0.0.1", "--port", "0"]) == ExitCode.CONFIG
    (line,) = capsys.readouterr().err.splitlines()  # one line, before anything started
    assert main(["doctor"]) == 1
    problems = [p for p in capsys.readouterr().out.splitlines() if p.startswith("PROBLEM")]
    assert len(problems) == 1
    for text in (line, problems[0]):
        assert said in text and "takes sqlite:///path" in text and "postgresql://" in text
        assert "memory://" in text and "model" not in text and PASSWORD not in text


def test_a_routes_checkpointer_scheme_is_one_line_without_its_password(capsys, tmp_path):
    route = {
        "name": "ops",
        "match": {"chat": "g2"},
        "agent": {"checkpointer_url": f"mysql://u:{PASSWORD}@db/x"},
    }
    (tmp_path / "bot.yaml").write_text(json.dumps({"routes": [route]}))  # JSON is YAML
    assert main(["serve", "--config", str(tmp_path / "bot.yaml"), "--port", "0"]) == ExitCode.CONFIG
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("clarigate: invalid configuration: routes.ops.agent: checkpointer_url: ")
    assert "unknown scheme 'mysql:'" in line and PASSWORD not in line


def test_an_unreachable_telegram_api_is_named_without_the_token(monkeypatch, capsys, unused_tcp_port):
    async def no_wait(seconds: float) -> None:
        pass

    monkeypatch.setattr(retry, "pause", no_wait)  # the start's retries, without their waits
    token = "123456:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
    api = f"http://127.0.0.1:{unused_tcp_port}"
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", token)
    monkeypatch.setenv("TELEGRAM_API_URL", api)
    code, lines = serve(capsys)
    assert code == ExitCode.PLATFORM
    error = the_error(lines)
    assert f"telegram could not start: Telegram API unreachable at {api}/bot (TELEGRAM_API_URL): " in error
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert f"PROBLEM telegram: Telegram API unreachable at {api}/bot (TELEGRAM_API_URL): " in out
    assert "AAHdqTcvCH1v" not in "\n".join([*lines, out])


def test_the_wait_for_redis_says_the_seconds_it_waits(monkeypatch, capsys, unused_tcp_port):
    monkeypatch.setenv("REDIS_URL", f"redis://127.0.0.1:{unused_tcp_port}/0")
    monkeypatch.setenv("CLARIGATE_STARTUP_WAIT_SECONDS", "3")
    started = time.monotonic()
    code, lines = serve(capsys)
    waited = time.monotonic() - started
    assert code == ExitCode.STORE_UNREACHABLE
    waits = [line for line in lines if "retrying in" in line]
    assert waits and all(line.endswith("(waiting up to 3 s)") for line in waits)
    assert " is not reachable after 3 s: " in the_error(lines)
    assert ".." not in the_error(lines)  # redis-py's reason ends in "." before our advice
    assert waited >= 2.9  # the whole budget, not only the waits that fitted into it whole


def test_an_approval_decision_misspelt_is_configuration(monkeypatch, capsys):
    """A decision ``require_approval`` cannot allow ("aprove") is refused with the settings (2),
    naming the tool and the decisions there are, not blamed on the model when the agent loads (6)."""
    monkeypatch.setenv("CLARIGATE_AGENT__REQUIRE_APPROVAL", json.dumps({"deploy": ["aprove", "reject"]}))
    monkeypatch.setenv("LLM_MODEL", "no-such-provider:model")  # a model that would stop the start (6)
    assert main(["serve", "--host", "127.0.0.1", "--port", "0"]) == ExitCode.CONFIG
    (line,) = capsys.readouterr().err.splitlines()
    assert "require_approval" in line and "deploy" in line and "aprove" in line
    assert "approve, edit, reject, respond" in line and "LLM_MODEL" not in line
