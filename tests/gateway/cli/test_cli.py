"""``clarigate doctor`` says precisely what is wrong; ``serve`` refuses a broken config file."""

from __future__ import annotations

import logging
import os

import pytest

from clarigate.gateway.cli.main import main
from clarigate.gateway.runtime.config import ENV_NAMES, load_config, startup_problems
from clarigate.gateway.runtime.preflight import ExitCode
from tests.gateway.runtime.placement_cases import GRAPH, place_env, setting_env


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch, tmp_path):
    """No operator variables from the machine; the agent's files go to a temporary folder."""
    for name in [*ENV_NAMES, *(n for n in os.environ if n.upper().startswith("CLARIGATE_"))]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLARIGATE_DATA_DIR", str(tmp_path / "data"))
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    # the commands set up logging for the process: give pytest its handlers back
    root.handlers[:] = handlers
    root.setLevel(level)


def test_doctor_on_a_sound_setup_exits_0(capsys):
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "ok      agent: model 'offline'" in out
    assert "note    store: embedded in-process store" in out
    # ``make …`` alone leaves ``clarigate`` off the PATH: ``make chat`` first
    assert "no platform is enabled" in out
    assert "(try `make chat` (or `clarigate chat` in the virtual environment) first)" in out
    assert out.rstrip().endswith("everything looks right")


def test_doctor_names_each_problem(tmp_path, monkeypatch, capsys):
    bot = tmp_path / "bot.yaml"
    bot.write_text("bot_id: b1\ntelegram:\n  bot_token: '123:in-the-file'\n", encoding="utf-8")
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:1/0")  # nothing listens there
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-only-half")

    assert main(["doctor", "--config", str(bot)]) == 1

    out = capsys.readouterr().out
    problems = [line for line in out.splitlines() if line.startswith("PROBLEM")]
    assert "note    config: telegram.bot_token in the config file is ignored" in out  # serve runs with it
    assert any("store: Redis at redis://127.0.0.1:1/0" in p and "not reachable" in p for p in problems)
    assert any(p.startswith("PROBLEM slack: SLACK_BOT_TOKEN is set but") for p in problems)
    assert "in-the-file" not in out
    assert len(problems) == 2


def test_doctor_passes_a_secret_in_the_file_as_serve_does(tmp_path, capsys):
    """A secret written in the YAML file is ignored with a warning, and serve runs: doctor says
    so in a note and exits 0 (a CI gate on doctor passes what serve accepts)."""
    bot = tmp_path / "sec.yaml"
    bot.write_text("slack:\n  bot_token: xoxb-123\n", encoding="utf-8")

    assert main(["doctor", "--config", str(bot)]) == 0

    out = capsys.readouterr().out
    assert "note    config: slack.bot_token in the config file is ignored" in out
    assert "PROBLEM" not in out and "xoxb-123" not in out
    assert out.rstrip().endswith("everything looks right")


def test_doctor_on_an_invalid_file(tmp_path, capsys):
    bot = tmp_path / "bot.yaml"
    bot.write_text("answer_policy: everybody\n", encoding="utf-8")
    assert main(["doctor", "--config", str(bot)]) == 1
    out = capsys.readouterr().out
    assert "PROBLEM config: invalid configuration" in out and "answer_policy" in out


def test_a_refused_value_is_one_line_naming_the_setting(tmp_path, monkeypatch, capsys):
    """Each refused setting as ``path: what is wrong`` on the one line, nested ones (a platform's
    section, the agent's) by their path; neither pydantic's pages nor the refused value."""
    bot = tmp_path / "bot.yaml"
    bot.write_text("slack:\n  streaming: sometimes\n", encoding="utf-8")
    monkeypatch.setenv("CLARIGATE_AGENT__MAX_MODEL_CALLS", "hunter2")
    assert main(["doctor", "--config", str(bot)]) == 1
    problem = capsys.readouterr().out.splitlines()[0]
    assert problem == (
        "PROBLEM config: invalid configuration: slack (built-in): streaming: Input should be 'auto' or 'off'"
    )

    monkeypatch.setenv("CLARIGATE_PROGRESS_AFTER_SECONDS", "hunter2")
    assert main(["serve"]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        "clarigate: invalid configuration: progress_after_seconds (CLARIGATE_PROGRESS_AFTER_SECONDS): Input "
        "should be a valid number, unable to parse string as a number; agent.max_model_calls "
        "(CLARIGATE_AGENT__MAX_MODEL_CALLS): Input should be a valid integer, unable to parse string as "
        "an integer"
    ]
    assert "hunter2" not in err


def test_serve_refuses_a_broken_config_file(tmp_path, capsys):
    assert main(["serve", "--config", str(tmp_path / "missing.yaml")]) == 2
    assert "cannot read config file" in capsys.readouterr().err


def test_doctor_never_prints_passwords(monkeypatch, capsys):
    monkeypatch.setenv("REDIS_URL", "redis://:hunter2@127.0.0.1:1/0")
    monkeypatch.setenv("CHECKPOINTER_URL", "sqlite:///nowhere/x.db")
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "hunter2" not in out and "redis://***@127.0.0.1:1/0" in out


def test_doctor_says_why_redis_and_postgres_cannot_be_reached(monkeypatch, unused_tcp_port, capsys):
    dead = f"127.0.0.1:{unused_tcp_port}"  # nothing listens there
    monkeypatch.setenv("REDIS_URL", f"redis://{dead}/0")
    monkeypatch.setenv("CHECKPOINTER_URL", f"postgresql://postgres:s3cret@{dead}/test")

    assert main(["doctor"]) == 1

    captured = capsys.readouterr()
    problems = [line for line in captured.out.splitlines() if line.startswith("PROBLEM")]
    assert len(problems) == 2
    assert problems[0].startswith("PROBLEM store:") and "refused" in problems[0].lower()
    assert problems[1].startswith("PROBLEM checkpointer:") and "refused" in problems[1].lower()
    assert "s3cret" not in captured.out + captured.err
    assert captured.err == ""  # the report is the whole output: no library warnings around it


def test_doctor_passes_on_what_redis_itself_says(monkeypatch, capsys):
    """The test Redis has no password: one in the URL is refused, and the report says so."""
    monkeypatch.setenv("REDIS_URL", "redis://:hunter2@127.0.0.1:6379/0")
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    (problem,) = [line for line in out.splitlines() if line.startswith("PROBLEM")]
    assert problem.startswith("PROBLEM store:") and "without any password configured" in problem
    assert "hunter2" not in out


def test_an_extra_adapter_that_cannot_be_imported_is_named_by_doctor_and_serve(monkeypatch, capsys):
    monkeypatch.setenv("CLARIGATE_EXTRA_ADAPTERS", '["acme_chat.adapter:AcmeAdapter"]')

    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "PROBLEM config: platforms: extra_adapters: cannot import 'acme_chat.adapter:AcmeAdapter'" in out
    assert "No module named 'acme_chat'" in out

    assert main(["serve", "--port", "1"]) == 2  # refuses before listening, without a traceback
    err = capsys.readouterr().err
    assert "clarigate: platforms: extra_adapters: cannot import 'acme_chat.adapter:AcmeAdapter'" in err
    assert "Traceback" not in err


def test_ctrl_c_while_the_command_loads_ends_it_without_a_traceback(monkeypatch):
    from clarigate.gateway.runtime import config as gateway_config

    def pressed_ctrl_c(path=None):
        raise KeyboardInterrupt  # the person presses Ctrl-C while the modules load

    monkeypatch.setattr(gateway_config, "load_config", pressed_ctrl_c)

    assert main(["chat"]) == 0  # leaving the chat with Ctrl-C is a normal way out
    assert main(["serve"]) == 130


@pytest.mark.parametrize(
    ("value", "said"), [("abc", "PORT 'abc' is not a port number (1-65535)"), ("70000", "out of range")]
)
def test_doctor_names_a_port_serve_would_refuse(monkeypatch, capsys, value, said):
    monkeypatch.setenv("PORT", value)
    assert main(["doctor"]) == 1
    (problem,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("PROBLEM")]
    assert problem.startswith("PROBLEM port:") and said in problem


def test_doctor_names_a_metrics_port_that_is_the_http_port(monkeypatch, capsys):
    monkeypatch.setenv("PORT", "9100")
    monkeypatch.setenv("CLARIGATE_METRICS_PORT", "9100")
    assert main(["doctor"]) == 1
    (problem,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("PROBLEM")]
    assert problem == (
        "PROBLEM port: metrics_port 9100 is the HTTP port (--port / PORT) too: set metrics_port to"
        " another port, or leave it unset to serve /metrics on the HTTP port"
    )


@pytest.mark.parametrize("role", ["worker", "web"])
def test_doctor_names_a_role_without_redis_as_serve_does(monkeypatch, capsys, role):
    """A setting that stops ``serve`` at start (exit 2) is a problem for doctor too, in its words."""
    monkeypatch.setenv("CLARIGATE_ROLE", role)
    said = (
        f"role {role!r} shares its work with other processes through Redis: set REDIS_URL "
        "(or role 'all' for one process on the embedded store)"
    )
    assert main(["serve", "--host", "127.0.0.1", "--port", "0"]) == ExitCode.CONFIG
    assert said in capsys.readouterr().err

    assert main(["doctor"]) == 1
    problems = [line for line in capsys.readouterr().out.splitlines() if line.startswith("PROBLEM")]
    assert problems == [f"PROBLEM config: {said}"]


def test_doctor_says_each_problem_serve_stops_on_once(monkeypatch, tmp_path, capsys):
    """Lines doctor's own checks already say (half a platform's credentials, a Telegram webhook
    without its secret, an agent setting that does not apply) are not repeated from serve's."""
    settings = {
        "CLARIGATE_ROLE": "worker",
        "SLACK_BOT_TOKEN": "xoxb-only-half",
        "TELEGRAM_BOT_TOKEN": "123:abc",
        "TELEGRAM_WEBHOOK_URL": "https://bot.example/telegram/webhook",
        **place_env(GRAPH),
        **setting_env("require_approval", tmp_path),
    }
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    stops_serve = startup_problems(load_config(None))
    assert len(stops_serve) == 4, stops_serve

    assert main(["doctor"]) == 1
    problems = [line for line in capsys.readouterr().out.splitlines() if line.startswith("PROBLEM")]
    assert len(problems) == len(stops_serve), problems
    for line in stops_serve:
        assert len([p for p in problems if p.endswith(f": {line}") or p == f"PROBLEM {line}"]) == 1, line
