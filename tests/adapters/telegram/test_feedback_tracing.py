"""A vote becomes LangSmith feedback on the run that gave the answer, when tracing is on: the real
``langsmith`` client against a fake LangSmith API on 127.0.0.1."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from langsmith import utils as langsmith_utils

from clarigate.adapters.testing import ScriptedRunner, Turn
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.flow import feedback_trace

from .harness import ALICE, BOB, GROUP, callback_update, mention_update
from .test_feedback import last_message

RUN_ID = str(uuid.uuid4())


class FakeLangSmith:
    """The three LangSmith routes feedback uses: ``/info``, ``POST /feedback``, ``PATCH /feedback/:id``."""

    def __init__(self) -> None:
        self.created: list[dict[str, Any]] = []
        self.updated: list[tuple[str, dict[str, Any]]] = []
        self.keys: set[str] = set()
        self.url = ""
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/info", self._info)
        app.router.add_post("/feedback", self._create)
        app.router.add_patch("/feedback/{feedback_id}", self._update)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"  # type: ignore[union-attr]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _info(self, request: web.Request) -> web.Response:
        return web.json_response({"version": "0.8.0", "license_expiration_time": None})

    async def _create(self, request: web.Request) -> web.Response:
        self.keys.add(request.headers.get("x-api-key", ""))
        body = await request.json()
        if any(c["id"] == body["id"] for c in self.created):
            return web.json_response({"detail": "feedback already exists"}, status=409)
        self.created.append(body)
        return web.json_response(body)

    async def _update(self, request: web.Request) -> web.Response:
        feedback_id = request.match_info["feedback_id"]
        if not any(c["id"] == feedback_id for c in self.created):
            return web.json_response({"detail": "not found"}, status=404)
        self.updated.append((feedback_id, await request.json()))
        return web.json_response({"id": feedback_id})


@pytest.fixture
async def langsmith(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeLangSmith]:
    """Tracing on, LangSmith's endpoint the fake (its cached settings and client forgotten)."""
    fake = FakeLangSmith()
    await fake.start()
    monkeypatch.setenv("LANGSMITH_TRACING", "true")
    monkeypatch.setenv("LANGSMITH_ENDPOINT", fake.url)
    monkeypatch.setenv("LANGSMITH_API_KEY", "lsv2-test-key")
    langsmith_utils.get_env_var.cache_clear()
    feedback_trace.forget_client()
    yield fake
    monkeypatch.undo()
    langsmith_utils.get_env_var.cache_clear()
    feedback_trace.forget_client()
    await fake.stop()


def traced(turn: Turn) -> TurnOutput:
    """A run that names its traced run, as the in-process and server runners do."""
    return TurnOutput(replies=[f"You said: {turn.text}"], run_id=RUN_ID)


async def test_votes_become_feedback_on_the_traced_run_and_a_change_updates_it(bench, langsmith):
    tg = await bench(ScriptedRunner(traced))
    await tg.deliver(mention_update("hello", ALICE, GROUP))
    message_id, _, votes = last_message(tg.api, GROUP["id"])

    await tg.deliver(callback_update(votes["👍"], message_id, ALICE, GROUP))
    await tg.deliver(callback_update(votes["👍"], message_id, ALICE, GROUP))  # the same again: nothing sent
    await tg.deliver(callback_update(votes["👎"], message_id, ALICE, GROUP))
    await tg.deliver(callback_update(votes["👍"], message_id, BOB, GROUP))
    await tg.gateway.drain()

    alice, bob = langsmith.created
    assert alice["run_id"] == bob["run_id"] == RUN_ID
    assert (alice["key"], alice["score"], alice["value"]) == ("user_vote", 1, "up")
    assert alice["feedback_source"]["metadata"] == {"platform": "telegram"}
    assert alice["id"] != bob["id"] and bob["score"] == 1  # one feedback per person
    assert langsmith.updated == [(alice["id"], {"score": 0, "value": "down"})]  # changed, not doubled
    assert langsmith.keys == {"lsv2-test-key"}


async def test_without_tracing_nothing_goes_to_langsmith(bench, langsmith, monkeypatch):
    monkeypatch.setenv("LANGSMITH_TRACING", "false")
    langsmith_utils.get_env_var.cache_clear()
    tg = await bench(ScriptedRunner(traced))
    await tg.deliver(mention_update("hello", ALICE, GROUP))
    message_id, _, votes = last_message(tg.api, GROUP["id"])
    await tg.deliver(callback_update(votes["👍"], message_id, ALICE, GROUP))
    await tg.gateway.drain()
    assert langsmith.created == [] and langsmith.updated == []
