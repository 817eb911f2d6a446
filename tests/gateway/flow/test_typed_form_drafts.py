"""A form's ``name: value`` lines typed over several messages, in the core, on both stores: what a
refused reply gave is kept for that question and person only, and read under their next reply."""

from __future__ import annotations

import itertools

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, form_request
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import FormField, catalog
from clarigate.gateway.flow.typed_drafts import draft_key
from clarigate.gateway.store.base import Store

FIELDS = [
    FormField(name="name", label="Project name", required=True),
    FormField(name="replicas", label="Replicas", type="number", required=True),
    FormField(name="region", label="Region"),
]


def _runner() -> ScriptedRunner:
    ids = itertools.count(1)

    def script(turn: Turn) -> TurnOutput:
        if turn.response is None and turn.text.startswith("deploy"):
            return asking(form_request("Deployment?", FIELDS, request_id=f"clarification:call-{next(ids)}"))
        return TurnOutput(replies=[f"read: {turn.text}"])

    return ScriptedRunner(script)


def _values(runner: ScriptedRunner) -> list[object]:
    return [c.response.values for c in runner.calls if c.response is not None and c.response.values]


async def test_lines_typed_over_three_messages_make_one_answer(store: Store, make_gateway) -> None:
    runner = _runner()
    gateway, chat = await make_gateway(store, runner)
    await chat.say("deploy the shop")
    await gateway.drain()

    await chat.reply("name: shop")
    await gateway.drain()
    assert chat.texts()[-1] == "\n".join(
        ["Replicas: This field is required", catalog.text("typed_form_kept", fields="Project name")]
    )
    await chat.reply("region: eu")
    await gateway.drain()
    assert chat.texts()[-1].endswith(catalog.text("typed_form_kept", fields="Project name, Region"))
    assert await store.get_json(draft_key("clarification:call-1", "u1")) == {"name": "shop", "region": "eu"}

    await chat.reply("replicas: 2\nregion: us")  # a field given again takes the new value
    await gateway.drain()
    assert _values(runner) == [{"name": "shop", "replicas": 2, "region": "us"}]
    assert await store.get_json(draft_key("clarification:call-1", "u1")) is None


async def test_a_cancelled_form_leaves_nothing_to_the_next_question(store: Store, make_gateway) -> None:
    runner = _runner()
    gateway, chat = await make_gateway(store, runner)
    await chat.say("deploy the shop")
    await gateway.drain()
    await chat.reply("name: shop")
    await gateway.drain()
    await chat.reply("/cancel")
    await gateway.drain()

    await chat.say("deploy the shop again")
    await gateway.drain()
    await chat.reply("replicas: 2")
    await gateway.drain()
    kept_replicas = catalog.text("typed_form_kept", fields="Replicas")  # and not the old name
    assert chat.texts()[-1] == f"Project name: This field is required\n{kept_replicas}"
    assert _values(runner) == []
