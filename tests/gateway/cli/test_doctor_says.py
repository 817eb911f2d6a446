"""``clarigate doctor`` says what ``serve`` says, naming what the operator set: the file
``CLARIGATE_CONFIG`` points at, the variable a refused value came from, a store that refused us
(not "not reachable"), a Sentinel in a line, a note that points where its problem is."""

from __future__ import annotations

import pytest

from clarigate.gateway.cli.main import main
from clarigate.gateway.runtime.preflight import ExitCode
from tests.agent.test_checkpoint import _postgres_reachable
from tests.gateway.runtime.placement_cases import GRAPH, place_env, setting_env

pytestmark = pytest.mark.usefixtures("clean_environment")  # tests/gateway/conftest.py


def doctor(capsys: pytest.CaptureFixture[str]) -> list[str]:
    """``clarigate doctor``'s lines (it finds a problem: exit 1)."""
    assert main(["doctor"]) == 1
    return capsys.readouterr().out.splitlines()


def serve(capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """``clarigate serve``'s exit code and its one ERROR line."""
    code = main(["serve", "--host", "127.0.0.1", "--port", "0"])
    (error,) = [line for line in capsys.readouterr().err.splitlines() if " ERROR " in line]
    return code, error


def problems(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("PROBLEM")]


def test_the_file_clarigate_config_names_is_the_one_said(monkeypatch, tmp_path, capsys):
    """The image and the Kubernetes manifests name the file with CLARIGATE_CONFIG: doctor said
    "no config file (defaults and environment)" while reading it."""
    bot = tmp_path / "bot.yaml"
    bot.write_text("bot_id: alpha\n", encoding="utf-8")
    monkeypatch.setenv("CLARIGATE_CONFIG", str(bot))

    main(["doctor"])

    first = capsys.readouterr().out.splitlines()[0]
    assert first == f"ok      config: {bot} (CLARIGATE_CONFIG), bot id 'alpha'"


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("redis://:hunter2@127.0.0.1:6379/0", "without any password configured"),  # the test Redis has none
        ("redis://127.0.0.1:6379/99", "DB index is out of range"),
    ],
)
def test_a_redis_that_refuses_us_is_said_as_serve_says_it(monkeypatch, capsys, url, said):
    monkeypatch.setenv("REDIS_URL", url)
    code, error = serve(capsys)
    assert code == ExitCode.STORE_REFUSED
    serves = error.partition("cannot start: store: ")[2]

    (problem,) = problems(doctor(capsys))

    assert said in problem and "refused us" in problem and "not reachable" not in problem
    assert problem.endswith("put the right password (and database) in REDIS_URL")
    where, _, why = serves.partition(" refused us ")
    assert problem.startswith(f"PROBLEM store: {where}, prefix 'clarigate' refused us {why}")
    assert "hunter2" not in problem + error


@pytest.mark.postgres
@pytest.mark.skipif(not _postgres_reachable(), reason="PostgreSQL at 127.0.0.1:5432 is not reachable")
def test_a_postgres_role_that_does_not_exist_is_a_refusal_not_not_reachable(monkeypatch, capsys):
    monkeypatch.setenv("CHECKPOINTER_URL", "postgresql://no_such_role_here@127.0.0.1:5432/test")
    code, error = serve(capsys)
    assert code == ExitCode.DATABASE and "check the user, password and database in CHECKPOINTER_URL" in error

    (problem,) = problems(doctor(capsys))

    assert 'role "no_such_role_here" does not exist' in problem and "not reachable" not in problem
    assert problem.endswith("; check the user, password and database in CHECKPOINTER_URL")


def test_unreachable_sentinels_are_said_in_a_readable_line(monkeypatch, capsys, unused_tcp_port):
    """redis-py's "No master found" quotes each Sentinel client's repr (~1,500 characters), and
    the advice asked whether Redis was running."""
    monkeypatch.setenv("REDIS_URL", f"redis+sentinel://127.0.0.1:{unused_tcp_port}/mymaster")
    reason = f"no master 'mymaster' found: Sentinel at 127.0.0.1:{unused_tcp_port} refused the connection"
    advice = "Are the Sentinels running there, and do they monitor the master the URL names?"

    code, error = serve(capsys)
    (problem,) = problems(doctor(capsys))

    assert code == ExitCode.STORE_UNREACHABLE
    for line in (error, problem):
        assert line.endswith(f": {reason}. {advice}"), line
        assert "<redis." not in line and "Is Redis running" not in line and len(line) < 400


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        (
            "CLARIGATE_BOT_ID",
            "a:b",
            "bot_id (CLARIGATE_BOT_ID): use only letters, digits, '.', '_' and '-', starting with a "
            "letter or digit",
        ),
        ("FEISHU_MODE", "socket", "feishu (built-in): mode (FEISHU_MODE): Input should be"),
        (
            "CLARIGATE_SLACK__ALLOWED_USERS",
            "[U0",
            "slack (built-in): allowed_users (CLARIGATE_SLACK__ALLOWED_USERS): starts with '[' but is "
            'not a JSON list (Expecting value at character 1): write a JSON list such as ["U1", "U2"], '
            "or the ids separated by commas (U1,U2)",
        ),
        (
            "ALLOW_CLARIFICATION",
            "maybe",
            "agent.allow_clarification (ALLOW_CLARIFICATION): not a yes/no value",
        ),
    ],
)
def test_a_refused_value_names_the_variable_it_came_from(monkeypatch, capsys, variable, value, said):
    """deploy/README.md promises one line naming the setting: the operator set the variable."""
    monkeypatch.setenv(variable, value)
    (problem,) = problems(doctor(capsys))
    assert problem.startswith("PROBLEM config: invalid configuration: ") and said in problem, problem


def test_a_value_from_the_file_names_no_variable(tmp_path, capsys):
    bot = tmp_path / "bot.yaml"
    bot.write_text("bot_id: 'a:b'\n", encoding="utf-8")
    assert main(["doctor", "--config", str(bot)]) == 1
    out = capsys.readouterr().out
    assert "invalid configuration: bot_id: use only letters" in out and "CLARIGATE_BOT_ID" not in out


def test_the_agents_problems_name_the_variable_as_serves_do(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("LLM_MODEL", "nonsense")
    (problem,) = problems(doctor(capsys))
    assert problem.startswith("PROBLEM agent: model 'nonsense'") and "check LLM_MODEL" in problem

    (tmp_path / "a-file").write_text("")
    monkeypatch.delenv("LLM_MODEL")
    monkeypatch.setenv("CLARIGATE_DATA_DIR", str(tmp_path / "a-file" / "data"))
    (problem,) = problems(doctor(capsys))
    assert f"the data directory {tmp_path / 'a-file' / 'data'} (CLARIGATE_DATA_DIR) cannot be used" in problem


def test_the_note_on_an_agent_not_started_points_at_its_problem(monkeypatch, tmp_path, capsys):
    """Notes come before the PROBLEM lines: it said "since a setting above does not apply"."""
    for name, value in {**place_env(GRAPH), **setting_env("max_model_calls", tmp_path)}.items():
        monkeypatch.setenv(name, value)

    lines = doctor(capsys)

    (note,) = [line for line in lines if line.startswith("note    agent: not started")]
    (problem,) = problems(lines)
    assert problem.startswith("PROBLEM settings: agent.max_model_calls does not apply")
    assert "below" in note and "above" not in note and lines.index(note) < lines.index(problem)
