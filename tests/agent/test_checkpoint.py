"""The request survives a checkpoint round trip (SQLite, PostgreSQL) and the thread goes on."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langchain_core.messages import ToolMessage

from clarigate.agent.checkpoint import open_checkpointer, sqlite_path
from clarigate.agent.harness import AgentSettings, ClarifyingAgent
from clarigate.agent.protocol import answer_message_text, answer_with_form

from .conftest import ask, scripted

POSTGRES_URL = "postgresql://postgres@127.0.0.1:5432/test"
FORM_TURN = {
    "content": "",
    "tool_calls": [
        ask(
            "Project details?",
            clarification_type="missing_info",
            fields=[
                {"name": "name", "label": "Name", "type": "text", "required": True},
                {"name": "size", "label": "Team size", "type": "number"},
            ],
        )
    ],
}


def _postgres_reachable() -> bool:
    try:
        with psycopg.connect(POSTGRES_URL, connect_timeout=2):
            return True
    except psycopg.Error:
        return False


async def _round_trip(settings: AgentSettings) -> None:
    """Ask on one agent, reload on a fresh one, compare, answer, continue."""
    thread = f"thread-{uuid.uuid4().hex}"
    first = await ClarifyingAgent.create(settings, model=scripted(FORM_TURN, {"content": "Done."}))
    try:
        asked = await first.run_turn(thread, "make a project")
        assert await first.ping()
    finally:
        await first.aclose()
    assert asked.request is not None

    model = scripted(FORM_TURN, {"content": "Created {last_user}"})
    second = await ClarifyingAgent.create(settings, model=model)
    try:
        reloaded = await second.pending_request(thread)
        stored = (await second.history(thread))[-1]
        assert reloaded == asked.request
        assert isinstance(stored, ToolMessage)
        assert stored.artifact == {"human_input": asked.request.to_artifact()}
        assert stored.content == asked.fallback_text

        response = answer_with_form(asked.request, {"name": "demo", "size": "3"}, None)
        out = await second.run_turn(thread, answer_message_text(asked.request, response), response)
        assert out.replies and out.replies[0].startswith("Created ")
        answer = model.calls[0][-1].additional_kwargs["human_input_response"]
        assert answer["value"].endswith(' [values: {"name":"demo","size":3}]')
        assert answer["clarigate"]["values"] == {"name": "demo", "size": 3}
        await second.delete_thread(thread)
        assert await second.history(thread) == []
    finally:
        await second.aclose()


async def test_sqlite_round_trip(tmp_path: Path) -> None:
    await _round_trip(AgentSettings(data_dir=str(tmp_path)))
    assert (tmp_path / "checkpoints.sqlite").exists()


@pytest.mark.postgres
async def test_postgres_round_trip() -> None:
    if not _postgres_reachable():
        pytest.skip("PostgreSQL not reachable on 127.0.0.1:5432")
    await _round_trip(AgentSettings(checkpointer_url=POSTGRES_URL))


async def test_ping_is_false_once_closed(tmp_path: Path) -> None:
    checkpointer = await open_checkpointer(f"sqlite://{tmp_path}/x.db", str(tmp_path))
    assert await checkpointer.ping()
    await checkpointer.aclose()
    assert not await checkpointer.ping()


def test_sqlite_urls(tmp_path: Path) -> None:
    assert sqlite_path(None, "data") == Path("data/checkpoints.sqlite")
    assert sqlite_path("sqlite:////srv/cp.db", "data") == Path("/srv/cp.db")
    assert sqlite_path("sqlite:///srv/cp.db", "data") == Path("/srv/cp.db")
    assert sqlite_path("sqlite:local.db", "data") == Path("local.db")
    assert sqlite_path("memory://", "data") is None


@pytest.mark.parametrize(
    ("url", "words"), [("redis://localhost:6379", "JSON and Search"), ("mongodb://x", "unknown scheme")]
)
async def test_unsupported_checkpointers_say_why(url: str, words: str, tmp_path: Any) -> None:
    with pytest.raises(ValueError, match=words):
        await open_checkpointer(url, str(tmp_path))
