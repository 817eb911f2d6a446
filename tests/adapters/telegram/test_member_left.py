"""A member who leaves a group: the question only they could answer closes, as their Cancel would."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from clarigate.adapters.telegram import TelegramAdapter
from clarigate.adapters.testing import ScriptedRunner, choice_request
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.store.memory import MemoryStore
from tests.conftest import test_config as gateway_config

from .fake_bot_api import BOT_USER
from .harness import (
    ALICE,
    BOB,
    GROUP,
    _update_ids,
    bot_message,
    mention_update,
    message_update,
    telegram_settings,
)
from .test_choices import ask_then_echo

CAROL = {"id": 333, "is_bot": False, "first_name": "Carol"}


def left_update(person: dict[str, Any], by: dict[str, Any] | None = None) -> dict[str, Any]:
    """The service message Telegram sends when ``person`` leaves ``GROUP`` (``by`` removed them)."""
    return message_update(None, by or person, GROUP, left_chat_member=person)


def member_update(
    person: dict[str, Any],
    new: dict[str, Any],
    old: dict[str, Any] | None = None,
    by: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``chat_member`` update (a ``ChatMemberUpdated``) Telegram sends a group's admin bots when
    ``person``'s status there changes from ``old`` (a plain member) to ``new`` (``by`` changed it)."""
    changed = {
        "chat": GROUP,
        "from": by or person,
        "date": int(time.time()),
        "old_chat_member": {"user": person, **(old or {"status": "member"})},
        "new_chat_member": {"user": person, **new},
    }
    return {"update_id": next(_update_ids), "chat_member": changed}


LEFT = {"status": "left"}
ADMIN = {
    f"can_{right}": True
    for right in (
        "manage_chat delete_messages manage_video_chats restrict_members promote_members change_info "
        "invite_users post_stories edit_stories delete_stories"
    ).split()
} | {"is_anonymous": False}
BANNED = {"status": "kicked", "until_date": 0}
#: restricted, then gone: ``ChatMemberRestricted`` with ``is_member`` false (Bot API)
RESTRICTED_GONE = {
    "status": "restricted",
    "is_member": False,
    "until_date": 0,
    **{
        f"can_{right}": False
        for right in (
            "send_messages send_audios send_documents send_photos send_videos send_video_notes "
            "send_voice_notes send_polls send_other_messages add_web_page_previews change_info "
            "invite_users pin_messages manage_topics edit_tag react_to_messages"
        ).split()
    },
}


async def test_the_asker_leaving_closes_their_question_and_the_chain_goes_on(bench):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner)  # only the person who asked may answer (answer_policy: starter)
    await tg.deliver(mention_update("deploy", BOB))
    asked = tg.api.of("sendMessage")[-1]
    question = bot_message(asked.result["message_id"], GROUP)
    await tg.deliver(left_update(CAROL))  # someone else leaving changes nothing
    assert not tg.api.of("editMessageText") and len(runner.calls) == 1
    tg.new_calls()

    await tg.deliver(left_update(BOB, by=ALICE))  # an admin removes Bob
    await tg.settle()
    edit = tg.api.of("editMessageText")[-1]  # the question is shown closed, as a Cancel shows it
    assert edit.params["message_id"] == str(asked.result["message_id"])
    told = runner.calls[-1].response  # the agent is told, in a follow-up run on the thread
    assert told is not None and told.response_kind == "declined" and told.reason == "cancelled"
    assert runner.calls[-1].thread_id == runner.calls[0].thread_id

    await tg.deliver(message_update("Vue", ALICE, GROUP, reply_to=question))  # the group goes on
    ran = runner.calls[-1]
    assert ran.response is None and ran.text.endswith("Vue") and "stays open" not in ran.text


async def test_a_question_anyone_may_answer_stays_open_when_its_asker_leaves(bench):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner, answer_policy="anyone")
    await tg.deliver(mention_update("deploy", BOB))
    await tg.deliver(left_update(BOB))
    await tg.settle()
    assert not tg.api.of("editMessageText") and len(runner.calls) == 1


async def asked_of_bob(tg: Any, runner: ScriptedRunner) -> dict[str, Any]:
    """Bob asks in the group; the question (only Bob may answer it) is sent."""
    await tg.deliver(mention_update("deploy", BOB))
    assert len(runner.calls) == 1
    return tg.api.of("sendMessage")[-1]


async def test_a_chat_member_update_of_a_person_leaving_closes_their_question(bench):
    """Groups that hide join and leave messages send no ``left_chat_member``: the ``chat_member``
    update (to a bot that is an admin there) tells the departure instead."""
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner)
    asked = await asked_of_bob(tg, runner)
    await tg.deliver(member_update(CAROL, LEFT))  # someone else leaving changes nothing
    await tg.deliver(member_update(BOB, {"status": "administrator", "can_be_edited": False, **ADMIN}))
    assert not tg.api.of("editMessageText") and len(runner.calls) == 1

    await tg.deliver(member_update(BOB, LEFT))
    await tg.settle()
    edit = tg.api.of("editMessageText")[-1]  # shown closed, as a Cancel shows it
    assert edit.params["message_id"] == str(asked.result["message_id"])
    told = runner.calls[-1].response
    assert told is not None and told.response_kind == "declined" and told.reason == "cancelled"
    assert len(runner.calls) == 2


@pytest.mark.parametrize("gone", [BANNED, RESTRICTED_GONE], ids=["banned", "restricted"])
async def test_a_person_banned_or_restricted_out_of_the_group_has_left_too(bench, gone):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner)
    await asked_of_bob(tg, runner)
    await tg.deliver(member_update(BOB, gone, by=ALICE))
    await tg.settle()
    assert len(tg.api.of("editMessageText")) == 1 and len(runner.calls) == 2


async def test_the_service_message_and_the_update_of_one_departure_close_it_once(bench):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner)
    await asked_of_bob(tg, runner)
    await tg.deliver(left_update(BOB))
    await tg.deliver(member_update(BOB, LEFT))
    await tg.settle()
    assert len(tg.api.of("editMessageText")) == 1 and len(runner.calls) == 2  # one close, one run


async def test_the_bot_leaving_or_a_person_joining_changes_nothing(bench):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner)
    await asked_of_bob(tg, runner)
    await tg.deliver(member_update(BOT_USER, LEFT))  # (its own is ``my_chat_member``, not asked for)
    await tg.deliver(member_update(BOB, {"status": "member"}, old=LEFT))
    await tg.settle()
    assert not tg.api.of("editMessageText") and len(runner.calls) == 1


async def test_the_webhook_asks_for_chat_member_updates_as_the_poller_does(bot_api):
    gateway = Gateway(gateway_config(), MemoryStore("t-allowed-updates"), ScriptedRunner())
    adapter = TelegramAdapter(telegram_settings(bot_api), gateway)
    await adapter.start()
    await adapter.start_receiving()
    await adapter.stop()
    hook = bot_api.of("setWebhook")[-1].params
    assert json.loads(hook["allowed_updates"]) == ["message", "callback_query", "chat_member"]
