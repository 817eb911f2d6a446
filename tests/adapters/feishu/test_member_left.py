"""A member who leaves a Feishu group: the question only they could answer closes, as Cancel would."""

from __future__ import annotations

from typing import Any

from clarigate.adapters.testing import ScriptedRunner

from .cards import is_interactive
from .events import envelope
from .test_scenarios import agent, ask
from .test_shared_groups import BOBS, in_thread


def members_deleted(*open_ids: str, chat: str = "oc_group") -> dict[str, Any]:
    """An ``im.chat.member.user.deleted_v1`` event, as Feishu documents it (an admin removed them)."""
    users = [
        {"name": f"User {i}", "tenant_key": "tenant-1", "user_id": {"open_id": i, "union_id": f"on_{i}"}}
        for i in open_ids
    ]
    event = {
        "chat_id": chat,
        "operator_id": {"open_id": "ou_admin", "union_id": "on_admin"},
        "external": False,
        "operator_tenant_key": "tenant-1",
        "users": users,
        "name": "Team",
    }
    return envelope("im.chat.member.user.deleted_v1", event)


async def test_the_asker_removed_from_the_group_closes_their_question(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    question_id, _ = await ask(bot, "deploy it", **BOBS)
    answered = await bot.deliver(members_deleted("ou_carol"))  # someone else: nothing changes
    assert answered.status_code == 200
    await bot.gateway.drain()
    assert is_interactive(bot.api.cards[question_id]) and len(bot.runner.calls) == 1

    answered = await bot.deliver(members_deleted("ou_bob", "ou_carol"))
    assert answered.status_code == 200
    await bot.gateway.drain()
    assert not is_interactive(bot.api.cards[question_id])  # shown closed, as a Cancel shows it
    told = bot.runner.calls[-1].response
    assert told is not None and told.response_kind == "declined" and told.reason == "cancelled"

    await bot.deliver(in_thread("summarize the logs", "ou_alice"))  # the thread goes on
    await bot.gateway.drain()
    alices = bot.runner.calls[-1]
    assert alices.response is None and "stays open" not in alices.text
