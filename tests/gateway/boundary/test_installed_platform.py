"""A platform installed as a distribution of its own (tests/platform_dist, entry point in
``clarigate.platforms``) is found, configured and guarded exactly like a built-in one."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.boundary import registry
from clarigate.gateway.runtime.app import build_gateway
from clarigate.gateway.runtime.config import load_config, startup_problems
from clarigate.gateway.runtime.identity import platform_identities
from clarigate.gateway.runtime.redaction import redact
from clarigate.gateway.store.memory import MemoryStore
from clarigate.gateway.web.server import build_app

TOKEN = "prr-parrotsecret42"


def test_the_installed_platform_is_in_the_registry():
    platforms = registry.installed()
    assert "parrot" in platforms, "install it: make install-dev"
    assert platforms["parrot"].origin.startswith("entry point parrot")
    assert list(platforms)[:3] == ["slack", "feishu", "telegram"]


def test_clarigate_run_from_the_projects_environment_does_not_see_it(tmp_path):
    """The test platform is the tests' own: a user who ran the tests once and then runs
    ``clarigate doctor`` from the same environment is not told about a platform "parrot"."""
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "FEISHU_", "TELEGRAM_"))}
    keep = {k: v for k, v in keep.items() if not k.startswith("CLARIGATE_") and k != "PYTHONPATH"}
    keep = {k: v for k, v in keep.items() if k not in ("REDIS_URL", "LLM_MODEL", "LANGGRAPH_URL")}
    doctor = subprocess.run(
        [str(Path(sys.executable).parent / "clarigate"), "doctor"],
        env={**keep, "CLARIGATE_DATA_DIR": str(tmp_path)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    said = doctor.stdout + doctor.stderr
    assert "no platform is enabled: set SLACK_BOT_TOKEN" in said, said
    assert (
        "TELEGRAM_BOT_TOKEN (try `make chat` (or `clarigate chat` in the virtual environment) first)" in said
    )
    assert "parrot" not in said.lower()
    assert "parrot" in registry.installed()  # while the tests themselves have it


@pytest.fixture
def parrot_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A bot configured only by its YAML file and ``CLARIGATE_PARROT__*`` variables."""
    outbox = tmp_path / "outbox.jsonl"
    path = tmp_path / "bot.yaml"
    path.write_text(f"bot_id: parrot-bot\nparrot:\n  allowed_users: [alice]\n  outbox: {outbox}\n")
    monkeypatch.setenv("CLARIGATE_PARROT__TOKEN", TOKEN)
    monkeypatch.setenv("CLARIGATE_PARROT__ALLOWED_CHATS", "room-1,room-2")
    return load_config(path), outbox


def test_its_section_comes_from_yaml_and_its_own_environment_names(parrot_config):
    config, outbox = parrot_config
    section = config.platform("parrot")
    assert section.allowed_users == ["alice"] and section.allowed_chats == ["room-1", "room-2"]
    assert section.outbox == str(outbox) and section.token.get_secret_value() == TOKEN
    assert config.enabled_platforms() == ["parrot"]  # on: its credentials are present
    assert startup_problems(config) == []
    assert TOKEN in config.secret_values()
    assert asyncio.run(platform_identities(config)) == {"parrot": "token prr-parr"}


def test_it_is_off_without_its_credentials_and_its_secrets_never_come_from_yaml(tmp_path, monkeypatch):
    path = tmp_path / "bot.yaml"
    path.write_text("parrot:\n  token: prr-inthefile\n  allowed_users: [alice]\n")
    monkeypatch.delenv("CLARIGATE_PARROT__TOKEN", raising=False)
    config = load_config(path)
    assert config.platform("parrot").token is None
    assert "parrot" not in config.enabled_platforms()
    assert config.warnings == [
        "parrot.token in the config file is ignored: secrets come from CLARIGATE_PARROT__TOKEN"
    ]


def test_a_typo_in_its_section_or_its_variables_stops_the_bot(tmp_path, monkeypatch):
    path = tmp_path / "bot.yaml"
    path.write_text("parrot:\n  alowed_users: [alice]\n")
    with pytest.raises(ValueError, match="'parrot.alowed_users' in the config file is not a setting"):
        load_config(path)
    monkeypatch.setenv("CLARIGATE_PARROT__ALOWED_USERS", "alice")
    with pytest.raises(
        ValueError, match="environment variable CLARIGATE_PARROT__ALOWED_USERS is not a setting"
    ):
        load_config()


def test_settings_it_cannot_read_keep_it_from_starting(tmp_path, monkeypatch):
    monkeypatch.setenv("CLARIGATE_PARROT__TOKEN", TOKEN)
    monkeypatch.setenv("CLARIGATE_PARROT__ENABLED", "perhaps")
    with pytest.raises(ValueError, match="parrot"):
        load_config()


def test_its_token_shape_is_masked_in_logs_even_when_not_configured():
    assert redact("posting with prr-Unconfigured99 now") == "posting with *** now"


class _QuietServer(uvicorn.Server):
    """uvicorn without its signal handlers: the test process's Ctrl-C stays the test runner's
    (a handler left behind would change what later tests of Ctrl-C see)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@pytest.fixture
async def served(parrot_config) -> AsyncIterator[tuple[str, Path]]:
    """The bot as ``serve`` builds it, over a real socket (uvicorn logs as in production)."""
    config, outbox = parrot_config
    gateway = build_gateway(config, store=MemoryStore("parrot"), runner=ScriptedRunner())
    server = _QuietServer(
        uvicorn.Config(build_app(gateway), host="127.0.0.1", port=0, lifespan="off", log_config=None)
    )
    task = asyncio.create_task(server.serve())
    for _ in range(6000):  # up to 60 s on a busy machine
        if server.started:
            break
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}", outbox
    finally:
        server.should_exit = True
        await task


async def post(base: str, event: dict[str, Any], token: str = TOKEN) -> httpx.Response:
    async with httpx.AsyncClient() as client:
        return await client.post(f"{base}/parrot/events", json=event, headers={"X-Parrot-Token": token})


async def test_its_allow_list_refuses_an_unlisted_user(served):
    base, outbox = served
    refused = await post(base, {"user": "mallory", "chat": "room-1", "text": "hello", "id": "e1"})
    assert refused.json() == {"outcome": "refused"}
    [line] = [json.loads(text) for text in outbox.read_text().splitlines()]
    assert line["chat"] == "room-1" and line["kind"] == "ErrorReply"
    wrong_room = await post(base, {"user": "alice", "chat": "room-9", "text": "hello", "id": "e2"})
    assert wrong_room.json() == {"outcome": "refused"}
    allowed = await post(base, {"user": "alice", "chat": "room-1", "text": "hello", "id": "e3"})
    assert allowed.json() == {"outcome": "accepted"}
    assert (
        await post(base, {"user": "alice", "text": "x", "id": "e4"}, token="prr-wrong")
    ).status_code == 401


async def test_an_error_in_its_handler_answers_500(served):
    base, _ = served
    assert (
        await post(base, {"user": "alice", "chat": "room-1", "text": "crash", "id": "e5"})
    ).status_code == 500


async def test_an_error_in_its_handler_is_logged_with_its_traceback(served, caplog):
    base, _ = served
    with caplog.at_level(logging.ERROR):
        response = await post(base, {"user": "alice", "chat": "room-1", "text": "crash", "id": "e6"})
    assert response.status_code == 500
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR and r.name.startswith("clarigate")]
    assert any(r.exc_info and "parrot's handler broke" in str(r.exc_info[1]) for r in errors)
