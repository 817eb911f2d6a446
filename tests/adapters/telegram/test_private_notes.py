"""Notes for one member of a group: ephemeral messages where the Bot API has them (10.2), a reply
the group sees on an older server, as before."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request
from clarigate.agent.harness import TurnOutput

from .harness import ALICE, BOB, GROUP, bot_message, callback_update, command_update

QUESTION = choice_request("Which framework?", ["React", "Vue"])
NOT_YOURS = "Alice"  # the note names who was asked


def ask(turn: Turn) -> TurnOutput:
    """Every request asks the question."""
    return asking(QUESTION)


async def alice_asked_then_bob_cancels(tg) -> int:
    """Alice's request asks a question in the group; Bob answers it with /cancel (not his to
    cancel). The question's message id."""
    await tg.deliver(command_update("/ask@clari_bot deploy the app", ALICE, chat=GROUP))
    question = next(c for c in tg.api.of("sendMessage") if "Which framework?" in c.params["text"])
    question_id = int(question.result["message_id"])
    await tg.deliver(
        command_update("/cancel@clari_bot", BOB, chat=GROUP, reply_to=bot_message(question_id, GROUP))
    )
    return question_id


async def test_a_note_for_one_member_is_ephemeral_where_the_server_has_them(bench):
    tg = await bench(ScriptedRunner(ask))
    tg.api.ephemeral = True  # a Bot API 10.2 server
    await alice_asked_then_bob_cancels(tg)

    private = [c for c in tg.api.of("sendMessage") if c.params.get("receiver_user_id")]
    assert len(private) == 1 and private[0].params["receiver_user_id"] == str(BOB["id"])
    note = private[0].params["text"]
    assert NOT_YOURS in note
    assert note in tg.api.visible_to(GROUP["id"], BOB["id"])
    assert note not in tg.api.visible_to(GROUP["id"], ALICE["id"])  # only Bob sees it
    assert len(tg.api.of("deleteEphemeralMessage")) == 1  # asked once whether the server has them


async def test_an_older_server_gets_the_note_as_a_reply_and_never_the_parameter(bench):
    tg = await bench(ScriptedRunner(ask))  # the fake speaks Bot API 10.0 unless told otherwise
    await alice_asked_then_bob_cancels(tg)

    assert all("receiver_user_id" not in c.params for c in tg.api.of("sendMessage"))
    probe = tg.api.of("deleteEphemeralMessage")
    assert len(probe) == 1  # asked once: 404, so notes go as before
    notes = [c for c in tg.api.of("sendMessage") if NOT_YOURS in c.params["text"]]
    assert len(notes) == 1 and notes[0].params["text"] in tg.api.visible_to(GROUP["id"], ALICE["id"])


async def test_the_other_prompt_reaches_only_the_member_who_tapped(bench):
    tg = await bench(ScriptedRunner(ask))
    tg.api.ephemeral = True
    await tg.deliver(command_update("/ask@clari_bot deploy the app", ALICE, chat=GROUP))
    question = next(c for c in tg.api.of("sendMessage") if "Which framework?" in c.params["text"])
    other = next(b["callback_data"] for row in question.buttons for b in row if b["text"] == "Other…")
    tap = callback_update(other, int(question.result["message_id"]), ALICE, GROUP)
    await tg.deliver(tap)
    await tg.settle()

    prompt = [c for c in tg.api.of("sendMessage") if c.params.get("receiver_user_id")]
    assert len(prompt) == 1 and prompt[0].params["receiver_user_id"] == str(ALICE["id"])
    assert prompt[0].params["callback_query_id"] == tap["callback_query"]["id"]
    text = prompt[0].params["text"]
    assert text in tg.api.visible_to(GROUP["id"], ALICE["id"])
    assert text not in tg.api.visible_to(GROUP["id"], BOB["id"])
