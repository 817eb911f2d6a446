"""``clarigate serve`` fails like ``doctor`` speaks: one line naming the setting, an exit code per class."""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from clarigate.gateway.cli.main import main
from clarigate.gateway.runtime.config import ENV_NAMES
from clarigate.gateway.runtime.preflight import ExitCode
from tests.adapters.slack.fake_slack import BOT_TOKEN
from tests.deploy.test_processes import fake_slack  # noqa: F401 (the fake Slack, served from a thread)


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch, tmp_path):
    """No operator variables from the machine; agent files in a temporary folder; waits kept short."""
    for name in [*ENV_NAMES, *(n for n in os.environ if n.upper().startswith("CLARIGATE_"))]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("CLARIGATE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("CLARIGATE_STARTUP_WAIT_SECONDS", "0")
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def serve(capsys, *flags: str) -> tuple[int, list[str]]:
    """Run ``clarigate serve`` on a free port; its exit code and its stderr lines."""
    code = main(["serve", "--host", "127.0.0.1", "--port", "0", *flags])
    return code, capsys.readouterr().err.splitlines()


def the_error(lines: list[str]) -> str:
    """The one ERROR line (asserting there is exactly one, and no traceback)."""
    errors = [line for line in lines if " ERROR " in line]
    assert len(errors) == 1, lines
    assert not any("Traceback" in line for line in lines), lines
    return errors[0]


def json_server(answer: Callable[[str], tuple[int, Any]]) -> Iterator[str]:
    """An HTTP server on a free port whose every call (GET or POST) gets ``answer(path)``, as JSON."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the base class's name)
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            status, body = answer(self.path)
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def refusing_platform() -> Iterator[str]:
    """An HTTP server answering every call as Slack and Telegram answer a wrong token."""

    def answer(path: str) -> tuple[int, Any]:
        if "/api/" in path:  # Slack: 200 with ok=false
            return 200, {"ok": False, "error": "invalid_auth"}
        return 401, {"ok": False, "error_code": 401, "description": "Unauthorized"}  # Telegram

    yield from json_server(answer)


def test_a_bad_model_id(monkeypatch, capsys):
    monkeypatch.setenv("LLM_MODEL", "no-such-provider:model")
    code, lines = serve(capsys)
    assert code == ExitCode.MODEL
    error = the_error(lines)
    assert "the agent could not start" in error and "model 'no-such-provider:model'" in error
    assert "LLM_MODEL" in lines[-1]


def test_a_missing_provider_key_and_the_traceback_at_debug(monkeypatch, capsys):
    monkeypatch.setenv("LLM_MODEL", "openai:gpt-4o-mini")
    code, lines = serve(capsys)
    assert code == ExitCode.MODEL and "OPENAI_API_KEY" in the_error(lines)
    code, lines = serve(capsys, "--log-level", "debug")
    assert code == ExitCode.MODEL and any("Traceback" in line for line in lines)


@pytest.mark.parametrize("under", ["a-file", "a-file/deeper"])
def test_a_data_directory_it_cannot_make_names_the_setting_not_the_model(
    monkeypatch, capsys, tmp_path, under
):
    # CLARIGATE_DATA_DIR under a regular file: the SQLite checkpointer cannot be made there
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("CLARIGATE_DATA_DIR", str(tmp_path / under / "data"))
    code, lines = serve(capsys)
    assert code == ExitCode.CONFIG  # a setting of the operator's, not the model's class (6)
    error = the_error(lines)
    assert f"the data directory {tmp_path / under / 'data'} (CLARIGATE_DATA_DIR) cannot be used" in error
    assert "Not a directory" in error and "LLM_MODEL" not in error and "model" not in error


@pytest.mark.parametrize("under", ["a-file", "a-file/deeper"])
def test_a_checkpointer_file_it_cannot_make_names_checkpointer_url_not_the_model(
    monkeypatch, capsys, tmp_path, under
):
    # CHECKPOINTER_URL puts the SQLite file under a regular file: it cannot be made there
    (tmp_path / "a-file").write_text("")
    path = tmp_path / under / "threads.db"
    monkeypatch.setenv("CHECKPOINTER_URL", f"sqlite:///{path}")
    code, lines = serve(capsys)
    assert code == ExitCode.CONFIG  # a setting of the operator's, not the model's class (6)
    error = the_error(lines)
    assert f"the checkpointer's file {path} (CHECKPOINTER_URL) cannot be used: Not a directory" in error
    assert "LLM_MODEL" not in error and "model" not in error and "CLARIGATE_DATA_DIR" not in error


@pytest.mark.parametrize("named", [True, False], ids=["checkpointer_url", "default_file"])
def test_a_folder_where_the_checkpointers_file_goes_names_the_setting_not_the_model(
    monkeypatch, capsys, tmp_path, named
):
    # a folder where SQLite's file goes: CHECKPOINTER_URL names it, or the default file's place
    folder = tmp_path / "checkpoints" if named else tmp_path / "data" / "checkpoints.sqlite"
    folder.mkdir(parents=True)
    if named:
        monkeypatch.setenv("CHECKPOINTER_URL", f"sqlite:///{folder}")
    code, lines = serve(capsys)
    assert code == ExitCode.CONFIG  # a setting of the operator's, not the model's class (6)
    error = the_error(lines)
    what = f"the checkpointer's file {folder} (CHECKPOINTER_URL)" if named else "(CLARIGATE_DATA_DIR)"
    assert f"{what} cannot be used: Is a directory" in error
    assert "LLM_MODEL" not in error and "model" not in error


def test_a_routes_checkpointer_file_it_cannot_make_names_the_route(capsys, tmp_path):
    (tmp_path / "a-file").write_text("")
    path = tmp_path / "a-file" / "ops.db"
    route = {"name": "ops", "match": {"chat": "g2"}, "agent": {"checkpointer_url": f"sqlite:///{path}"}}
    (tmp_path / "bot.yaml").write_text(json.dumps({"routes": [route]}))  # JSON is YAML
    code, lines = serve(capsys, "--config", str(tmp_path / "bot.yaml"))
    assert code == ExitCode.CONFIG
    error = the_error(lines)
    assert f"route ops: the checkpointer's file {path} (CHECKPOINTER_URL) cannot be used" in error
    assert "model" not in error


def test_log_settings_written_as_logging_spells_them(monkeypatch, capsys):
    # INFO, DEBUG: the names Python's logging and most operators use; refused before
    monkeypatch.setenv("LLM_MODEL", "openai:gpt-4o-mini")
    monkeypatch.setenv("CLARIGATE_LOG_LEVEL", "DEBUG")
    monkeypatch.setenv("CLARIGATE_LOG_FORMAT", "JSON")
    code, lines = serve(capsys)
    assert code == ExitCode.MODEL
    errors = [json.loads(line) for line in lines if '"level": "ERROR"' in line]
    assert len(errors) == 1 and "OPENAI_API_KEY" in errors[0]["message"] and "Traceback" in errors[0]["exc"]
    monkeypatch.delenv("CLARIGATE_LOG_LEVEL")
    code, lines = serve(capsys, "--log-level", "Debug", "--log-format", "TEXT")
    assert code == ExitCode.MODEL and any("Traceback" in line for line in lines)
    assert any(" ERROR " in line and "OPENAI_API_KEY" in line for line in lines)


@pytest.fixture
def assistantless_server() -> Iterator[str]:
    """A LangGraph server (its HTTP API as the SDK calls it) that answers but has no assistant."""

    def answer(path: str) -> tuple[int, Any]:
        if path == "/ok":
            return 200, {"ok": True}
        if path == "/assistants/search":
            return 200, []
        return 404, {"detail": "Assistant not found"}  # GET /assistants/{id}

    yield from json_server(answer)


def test_a_langgraph_server_without_the_assistant(monkeypatch, capsys, assistantless_server):
    monkeypatch.setenv("LANGGRAPH_URL", assistantless_server)
    monkeypatch.setenv("CLARIGATE_AGENT__ASSISTANT_ID", "nope")
    code, lines = serve(capsys)
    assert code == ExitCode.MODEL
    error = the_error(lines)
    assert "the agent could not start" in error and "has no assistant or graph 'nope'" in error
    assert "LLM_MODEL" not in error  # the server runs its own model: nothing to check here


def test_unreachable_postgres_is_waited_for_then_named(monkeypatch, unused_tcp_port, capsys):
    monkeypatch.setenv("CHECKPOINTER_URL", f"postgresql://postgres:s3cret@127.0.0.1:{unused_tcp_port}/test")
    monkeypatch.setenv("CLARIGATE_STARTUP_WAIT_SECONDS", "1")
    code, lines = serve(capsys)
    assert code == ExitCode.DATABASE
    waits = [line for line in lines if "retrying in" in line]
    assert waits and all(" WARNING " in line and "PostgreSQL" in line for line in waits)
    assert "is not reachable after" in the_error(lines)
    assert "s3cret" not in "\n".join(lines)


@pytest.mark.postgres
def test_a_missing_database_stops_at_once(monkeypatch, capsys):
    monkeypatch.setenv("CHECKPOINTER_URL", "postgresql://postgres@127.0.0.1:5432/no_such_db_here")
    monkeypatch.setenv("CLARIGATE_STARTUP_WAIT_SECONDS", "30")
    code, lines = serve(capsys)
    assert code == ExitCode.DATABASE
    error = the_error(lines)
    assert 'database "no_such_db_here" does not exist' in error and "retrying" not in "\n".join(lines)


def test_unreachable_redis(monkeypatch, unused_tcp_port, capsys):
    monkeypatch.setenv("REDIS_URL", f"redis://127.0.0.1:{unused_tcp_port}/0")
    code, lines = serve(capsys)
    assert code == ExitCode.STORE_UNREACHABLE
    assert f"Redis at redis://127.0.0.1:{unused_tcp_port}/0 is not reachable" in the_error(lines)


SENTINEL_PASSWORD = "SentinelPw-4f9a1c"


def test_unreachable_sentinels_are_named_without_their_password(monkeypatch, unused_tcp_port, capsys):
    # deploy/README.md, "Redis Sentinel": "add ?sentinel_password=… when the Sentinels require their own"
    where = f"redis+sentinel://127.0.0.1:{unused_tcp_port}/mymaster"
    monkeypatch.setenv("REDIS_URL", f"{where}?sentinel_password={SENTINEL_PASSWORD}&socket_timeout=5")
    code, lines = serve(capsys)
    assert code == ExitCode.STORE_UNREACHABLE
    assert f"Redis at {where}?sentinel_password=***&socket_timeout=5 is not reachable" in the_error(lines)

    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert f"PROBLEM store: Redis at {where}?sentinel_password=***&socket_timeout=5, prefix" in out, out
    assert SENTINEL_PASSWORD not in "\n".join([*lines, out])


UNUSABLE_REDIS_URLS = {
    # redis-py's own list of schemes leaves out the documented redis+sentinel://
    "http://:hunter2@127.0.0.1:6379/0": "starts with redis://, rediss:// (TLS), unix:// or redis+sentinel://",
    "redis://:hunter2@127.0.0.1:6379/0?socket_timout=5": "not one redis-py knows",
    # redis-py would take these as database 0 without a word
    "redis://:hunter2@127.0.0.1:6379/clarigate": "database must be a number",
    "redis://:hunter2@127.0.0.1:6379/-1": "database must be a number",
    "rediss://:hunter2@127.0.0.1:6379/0?ssl_cert_reqs=bogus": "Invalid SSL Certificate Requirements Flag",
    # a password with an unescaped "/": redis-py reads a piece of it as the port, and says so
    "redis://:hunter2/x@127.0.0.1:6379/0": "Port could not be cast to integer value as '***'",
}


@pytest.mark.parametrize("url", UNUSABLE_REDIS_URLS)
def test_a_redis_url_no_client_can_use_is_named_by_serve_doctor_and_admin(monkeypatch, capsys, url):
    monkeypatch.setenv("REDIS_URL", url)
    why = UNUSABLE_REDIS_URLS[url]

    code, lines = serve(capsys)
    assert code == ExitCode.CONFIG
    error = the_error(lines)
    assert "cannot start: REDIS_URL cannot be used: " in error and why in error

    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    problems = [line for line in out.splitlines() if line.startswith("PROBLEM")]
    assert len(problems) == 1 and problems[0].startswith("PROBLEM store: REDIS_URL cannot be used: "), out
    assert why in problems[0] and "Traceback" not in out

    assert main(["admin", "threads"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("clarigate admin: REDIS_URL cannot be used: ") and why in err, err
    assert "hunter2" not in "\n".join([*lines, out, err])


def test_a_wrong_redis_password_stops_at_once(monkeypatch, capsys):
    monkeypatch.setenv("REDIS_URL", "redis://:hunter2@127.0.0.1:6379/0")  # the test Redis has none
    monkeypatch.setenv("CLARIGATE_STARTUP_WAIT_SECONDS", "30")
    code, lines = serve(capsys)
    assert code == ExitCode.STORE_REFUSED
    assert "REDIS_URL" in the_error(lines) and "hunter2" not in "\n".join(lines)


@pytest.mark.parametrize("platform", ["slack", "telegram"])
def test_a_bad_platform_token(monkeypatch, capsys, refusing_platform, platform):
    if platform == "slack":
        monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-wrong")
        monkeypatch.setenv("SLACK_SIGNING_SECRET", "signing-secret")
        monkeypatch.setenv("SLACK_API_URL", refusing_platform)
    else:
        monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123:wrong-token")
        monkeypatch.setenv("TELEGRAM_API_URL", refusing_platform)
    code, lines = serve(capsys)
    assert code == ExitCode.PLATFORM
    error = the_error(lines)
    assert f"cannot start: {platform} could not start:" in error
    assert f"{platform.upper()}_BOT_TOKEN" in error and "wrong" not in error


def test_an_app_token_slack_refuses_stops_serve_naming_it(monkeypatch, capsys, fake_slack):  # noqa: F811
    """Socket Mode with a wrong app token (``apps.connections.open`` answers ``invalid_auth``):
    exit 7 and one line naming SLACK_APP_TOKEN, not a reconnect with a traceback every 10 s
    while the port never opens."""
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)  # a bot token Slack takes
    monkeypatch.setenv("SLACK_APP_TOKEN", "xapp-1-A1-FAKE")
    monkeypatch.setenv("SLACK_API_URL", fake_slack.api_url)
    code, lines = serve(capsys)
    assert code == ExitCode.PLATFORM
    error = the_error(lines)
    assert "cannot start: slack could not start:" in error
    assert "SLACK_APP_TOKEN" in error and "invalid_auth" in error and "FAKE" not in "\n".join(lines)
    assert [c.answer["error"] for c in fake_slack.attempts("apps.connections.open")] == ["invalid_auth"]


def test_a_telegram_webhook_without_its_secret(monkeypatch, capsys):
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123:token")
    monkeypatch.setenv("TELEGRAM_WEBHOOK_URL", "https://bot.example.com/telegram/webhook")
    code, lines = serve(capsys)
    assert code == ExitCode.CONFIG and "TELEGRAM_WEBHOOK_SECRET" in the_error(lines)


def test_a_feishu_webhook_with_nothing_to_check_requests_by(monkeypatch, capsys):
    """Neither FEISHU_ENCRYPT_KEY nor FEISHU_VERIFICATION_TOKEN: anyone could post events to
    /feishu/events as any user, so serve does not start (as Slack without its signing secret)."""
    monkeypatch.setenv("FEISHU_APP_ID", "cli_FAKE123")
    monkeypatch.setenv("FEISHU_APP_SECRET", "an-app-secret")
    monkeypatch.setenv("LLM_MODEL", "no-such-provider:model")  # a serve that got past the check stops
    code, lines = serve(capsys)
    assert code == ExitCode.CONFIG
    error = the_error(lines)
    assert "feishu: " in error and "FEISHU_ENCRYPT_KEY" in error and "FEISHU_VERIFICATION_TOKEN" in error
    assert "FEISHU_MODE=long_connection" in error and "an-app-secret" not in "\n".join(lines)


def test_part_of_the_slack_credentials(monkeypatch, capsys):
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-half")
    code, lines = serve(capsys)
    assert code == ExitCode.CONFIG and "SLACK_SIGNING_SECRET" in the_error(lines)


@pytest.mark.parametrize("how", ["flag", "setting"])
def test_a_web_or_worker_role_without_redis(monkeypatch, capsys, how):
    if how == "flag":
        code, lines = serve(capsys, "--role", "web")
    else:
        monkeypatch.setenv("CLARIGATE_ROLE", "worker")
        code, lines = serve(capsys)
    assert code == ExitCode.CONFIG and "set REDIS_URL" in the_error(lines)


def test_a_port_out_of_range_or_in_use(capsys):
    assert main(["serve", "--port", "70000"]) == ExitCode.CONFIG
    assert "out of range" in the_error(capsys.readouterr().err.splitlines())
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "--host", "127.0.0.1", "--port", str(port)]) == ExitCode.PORT
    assert f"port {port} on 127.0.0.1 is in use" in the_error(capsys.readouterr().err.splitlines())


def test_a_misspelt_variable_stops_serve_and_doctor(monkeypatch, capsys):
    monkeypatch.setenv("CLARIGATE_SLACK__ALLOWED_USER", "U1")
    assert main(["serve"]) == ExitCode.CONFIG
    assert "did you mean `CLARIGATE_SLACK__ALLOWED_USERS`?" in capsys.readouterr().err
    assert main(["doctor"]) == 1
    assert "did you mean `CLARIGATE_SLACK__ALLOWED_USERS`?" in capsys.readouterr().out


@pytest.mark.postgres
def test_create_database_makes_a_missing_database(monkeypatch, capsys):
    import uuid

    import psycopg

    name = f"clarigate_test_{uuid.uuid4().hex[:10]}"
    monkeypatch.setenv("CHECKPOINTER_URL", f"postgresql://postgres@127.0.0.1:5432/{name}")
    monkeypatch.setenv("CLARIGATE_CREATE_DATABASE", "true")
    monkeypatch.setenv("LLM_MODEL", "no-such-provider:model")  # stops right after the database step
    try:
        code, lines = serve(capsys)
        assert code == ExitCode.MODEL  # got past the database
        assert any(f"created database '{name}'" in line for line in lines)
        with psycopg.connect(f"postgresql://postgres@127.0.0.1:5432/{name}") as connection:
            assert connection.execute("SELECT current_database()").fetchone() == (name,)
    finally:
        with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
