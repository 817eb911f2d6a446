"""The lines typed towards a form go with its question, on both stores: however it closes (a tap,
its form, a typed answer, the Cancel button, ``/cancel``, ``/new``, a new message), every person's
kept lines of it are deleted from the store there and then, not left until they expire."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable

import pytest

from clarigate.adapters.testing import ScriptedRunner, TestAdapter, Turn, asking, form_request
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import FormField, Option, catalog
from clarigate.gateway.cli.admin_store import Admin
from clarigate.gateway.flow.typed_drafts import draft_key, drafters_key
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.store.base import Store

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")

RID = "clarification:call-deploy"
FIELDS = [
    FormField(name="name", label="Project name", required=True),
    FormField(name="replicas", label="Replicas", type="number", required=True),
]
# a form with an option beside its fields, so that a tap can answer it too
DEPLOY = form_request("Deployment?", FIELDS, request_id=RID).model_copy(
    update={"options": [Option(id="option-1", label="The usual", value="usual")]}
)

Close = Callable[[TestAdapter], Awaitable[object]]
CLOSINGS: dict[str, Close] = {
    "a tap": lambda chat: chat.click(0, user="ann"),
    "its form": lambda chat: chat.submit({"name": "shop", "replicas": "3"}, user="ann"),
    "a typed answer": lambda chat: chat.reply("replicas: 3", user="ann"),  # the name is kept
    "someone else's typed answer": lambda chat: chat.reply("name: shop\nreplicas: 3", user="cai"),
    "the Cancel button": lambda chat: chat.cancel(user="ann"),
    "/cancel": lambda chat: chat.reply("/cancel", user="ann"),
    "/new": lambda chat: chat.reply("/new", user="ann"),
    "a new message": lambda chat: chat.reply("what is on the calendar today?", user="ann"),
}


def _runner() -> ScriptedRunner:
    def script(turn: Turn) -> TurnOutput:
        if turn.response is None and turn.text.startswith("deploy"):
            return asking(DEPLOY)
        return TurnOutput(replies=["done"])

    return ScriptedRunner(script)


async def _drafts(store: Store) -> list[object]:
    """What the store holds of the form's kept lines: ann's, bob's, and the list of who has some."""
    keys = [draft_key(RID, "ann"), draft_key(RID, "bob"), drafters_key(RID)]
    return [await store.get_json(key) for key in keys]


@pytest.mark.parametrize("closing", list(CLOSINGS))
async def test_closing_the_question_deletes_every_persons_kept_lines(
    store: Store, make_gateway, closing: str
) -> None:
    runner = _runner()
    gateway, chat = await make_gateway(store, runner, answer_policy="anyone")
    await chat.say("deploy the shop", user="ann")
    await gateway.drain()
    await chat.reply("name: shop", user="ann")
    await gateway.drain()
    await chat.reply("replicas: 2", user="bob")
    await gateway.drain()
    assert chat.texts()[-1].endswith(catalog.text("typed_form_kept", fields="Replicas"))
    assert await _drafts(store) == [{"name": "shop"}, {"replicas": "2"}, ["ann", "bob"]]

    await CLOSINGS[closing](chat)
    await gateway.drain()

    record = await store.get_pending(RID)
    assert record is not None and record.status == "answered"  # the question did close
    assert await _drafts(store) == [None, None, None]


async def test_a_question_still_open_keeps_the_lines(store: Store, make_gateway) -> None:
    runner = _runner()
    gateway, chat = await make_gateway(store, runner, answer_policy="anyone")
    await chat.say("deploy the shop", user="ann")
    await gateway.drain()
    await chat.reply("name: shop", user="ann")
    await gateway.drain()
    await chat.reply("replicas: two", user="ann")  # refused again: what was kept stays
    await gateway.drain()

    assert await _drafts(store) == [{"name": "shop"}, None, ["ann"]]


async def test_an_operator_cancel_deletes_the_kept_lines(make_gateway, redis_stores) -> None:
    store = redis_stores()
    gateway, chat = await make_gateway(store, _runner(), answer_policy="anyone")
    await chat.say("deploy the shop", user="ann")
    await gateway.drain()
    await chat.reply("name: shop", user="ann")
    await gateway.drain()
    assert await _drafts(store) == [{"name": "shop"}, None, ["ann"]]

    config = GatewayConfig(redis_url=REDIS_URL, bot_id=store.prefix)
    async with Admin(config) as admin:  # ``clarigate admin pending --cancel``
        await admin.cancel(RID, {"test": chat})

    assert await _drafts(store) == [None, None, None]
