"""Options, "Other…", risk confirmation and typed replies, through the real gateway."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import HumanInputRequest, Option

from .harness import (
    ALICE,
    BOB,
    GROUP,
    bot_message,
    callback_update,
    mention_update,
    message_update,
    private_chat,
)


def ask_then_echo(request: HumanInputRequest):
    """A script: the first turn asks ``request``, later turns say what they got."""

    def script(turn: Turn) -> TurnOutput:
        if turn.response is None and "deploy" in turn.text:
            return asking(request)
        value = turn.response.value if turn.response else turn.text
        return TurnOutput(replies=[f"Going with **{value}**."])

    return script


def clarification_call(bench):
    """The sendMessage that carried the clarification (the one with a keyboard or ForceReply)."""
    return next(c for c in bench.api.of("sendMessage") if c.markup)


async def test_tap_answers_edits_the_message_and_runs_the_next_turn(bench):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue", "Svelte"])))
    tg = await bench(runner)

    await tg.deliver(message_update("deploy the app"))

    asked = clarification_call(tg)
    assert asked.params["chat_id"] == str(ALICE["id"])
    assert "Which framework?" in asked.params["text"] and asked.params["parse_mode"] == "HTML"
    labels = [b["text"] for row in asked.buttons for b in row]
    assert labels == ["React", "Vue", "Svelte", "Other…", "✖ Cancel"]
    data = [b["callback_data"] for row in asked.buttons for b in row]
    assert all(len(d.encode()) <= 64 and "Vue" not in d for d in data)
    assert tg.api.of("sendChatAction")[0].params["action"] == "typing"

    message_id = 1000  # the fake server numbers the bot's messages from 1000
    tg.new_calls()
    await tg.deliver(callback_update(data[1], message_id))

    calls = tg.new_calls()
    answered = [c for c in calls if c.method == "answerCallbackQuery"]
    assert len(answered) == 1 and answered[0].params["text"] == "Answer received."
    assert calls[0].method == "answerCallbackQuery"  # the tap is answered before anything else
    edit = next(c for c in calls if c.method == "editMessageText")
    assert "✅ Answered by Alice: Vue" in edit.params["text"] and "reply_markup" not in edit.params
    assert runner.calls[-1].response is not None and runner.calls[-1].response.option_id == "option-2"
    reply = [c for c in calls if c.method == "sendMessage"][-1]
    assert reply.params["text"] == "Going with <b>Vue</b>."


async def test_second_tap_wrong_user_and_expired_token_change_nothing(bench):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner)
    await tg.deliver(message_update("deploy", user=ALICE))
    asked = clarification_call(tg)
    react, vue = (b["callback_data"] for b in asked.buttons[0])

    # Bob taps in Alice's chat (e.g. a forwarded keyboard): not his question.
    tg.new_calls()
    await tg.deliver(callback_update(vue, 1000, user=BOB, chat=private_chat(ALICE)))
    calls = tg.new_calls()
    assert [c.method for c in calls] == ["answerCallbackQuery"]
    assert (
        calls[0].params["text"] == "Only Alice can answer this question."
        and calls[0].params["show_alert"] == "true"
    )

    await tg.deliver(callback_update(react, 1000))
    tg.new_calls()
    await tg.deliver(callback_update(vue, 1000))  # a second tap after the answer
    calls = tg.new_calls()
    assert [c.method for c in calls] == ["answerCallbackQuery"]
    assert calls[0].params["text"] == "You already answered this question."  # to Alice herself

    token = react.split("|")[0]
    await tg.deliver(callback_update(f"{token[::-1]}|o1", 1000))  # a token nobody issued
    calls = tg.new_calls()
    assert [c.method for c in calls] == ["answerCallbackQuery"]
    assert "expired" in calls[0].params["text"]
    assert len([c for c in runner.calls if c.response is not None]) == 1


async def test_other_asks_with_force_reply_and_the_reply_answers(bench):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner)
    await tg.deliver(message_update("deploy"))
    other = clarification_call(tg).buttons[-1][0]
    assert other["text"] == "Other…"

    tg.new_calls()
    await tg.deliver(callback_update(other["callback_data"], 1000))
    calls = tg.new_calls()
    prompt = next(c for c in calls if c.method == "sendMessage")
    prompt_id = 1001  # the fake server numbers messages from 1000: the question, then this prompt
    assert prompt.markup["force_reply"] is True and prompt.markup["selective"] is True
    assert prompt.params["text"].startswith('<a href="tg://user?id=111">Alice</a>: Type your answer')
    assert any(c.method == "answerCallbackQuery" for c in calls)

    await tg.deliver(message_update("Solid", reply_to=bot_message(int(prompt_id), private_chat(ALICE))))
    assert runner.calls[-1].response is not None and runner.calls[-1].response.value == "Solid"
    edits = tg.api.of("editMessageText")
    assert edits and "✅ Answered by Alice: Solid" in edits[-1].params["text"]


async def test_typed_reply_answers_without_tapping(bench):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner)
    await tg.deliver(message_update("deploy"))
    await tg.deliver(message_update("2"))
    assert runner.calls[-1].response is not None and runner.calls[-1].response.option_id == "option-2"
    edit = tg.api.of("editMessageText")[-1]
    assert "✅ Answered by Alice: Vue" in edit.params["text"] and "reply_markup" not in edit.params


async def test_risk_go_ahead_is_marked_and_the_safe_choice_answers_at_once(bench):
    risk = HumanInputRequest(
        request_id="clarification:risk-1",
        tool_call_id="risk-1",
        clarification_type="risk_confirmation",
        question="Drop the production table?",
        input_mode="choice_with_other",
        options=[
            Option(id="option-1", label="Drop it", value="Drop it"),
            Option(id="option-2", label="Keep it", value="Keep it"),
        ],
    )
    runner = ScriptedRunner(ask_then_echo(risk))
    tg = await bench(runner)
    await tg.deliver(message_update("deploy and clean up"))
    asked = clarification_call(tg)
    texts = [b["text"] for row in asked.buttons for b in row]
    assert texts == ["⚠️ Drop it", "Keep it", "✖ Cancel"]
    assert "⚠️" in asked.params["text"]

    await tg.deliver(callback_update(asked.buttons[0][1]["callback_data"], 1000))
    assert runner.calls[-1].response.option_id == "option-2"
    assert "Keep it" in tg.api.of("editMessageText")[-1].params["text"]


async def test_free_text_question_uses_force_reply(bench):
    question = HumanInputRequest(
        request_id="clarification:ft-1",
        tool_call_id="ft-1",
        question="What is the repo URL?",
        input_mode="free_text",
    )
    runner = ScriptedRunner(ask_then_echo(question))
    tg = await bench(runner)
    await tg.deliver(message_update("deploy"))
    asked = clarification_call(tg)
    assert asked.markup["force_reply"] is True and "What is the repo URL?" in asked.params["text"]
    await tg.deliver(message_update("https://git.example.com/app"))
    assert runner.calls[-1].response.value == "https://git.example.com/app"


async def test_redelivered_tap_is_handled_once(bench):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner)
    await tg.deliver(message_update("deploy"))
    tap = callback_update(clarification_call(tg).buttons[0][0]["callback_data"], 1000)
    await tg.deliver(tap)
    await tg.deliver(tap)  # the same update again, as after a lost 200
    assert len([c for c in runner.calls if c.response is not None]) == 1
    assert len(tg.api.of("editMessageText")) == 1
    first, again = tg.api.of("answerCallbackQuery")
    assert first.params["text"] == "Answer received." and "text" not in again.params


async def test_group_question_other_and_reply_stay_in_the_mentions_chain(bench):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner)
    start = mention_update("deploy the site")
    await tg.deliver(start)
    asked = clarification_call(tg)
    assert asked.params["chat_id"] == str(GROUP["id"])
    assert f'"message_id": {start["message"]["message_id"]}' in asked.params["reply_parameters"]

    await tg.deliver(callback_update(asked.buttons[-1][0]["callback_data"], 1000, chat=GROUP))
    prompt_id = 1001
    await tg.deliver(message_update("Astro", chat=GROUP, reply_to=bot_message(prompt_id, GROUP)))

    first, answer = runner.calls
    assert answer.response is not None and answer.response.value == "Astro"
    assert first.thread_id == answer.thread_id
    assert "✅ Answered by Alice: Astro" in tg.api.of("editMessageText")[-1].params["text"]


async def test_taps_on_an_expired_question_explain_and_change_nothing(bench):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner, pending_ttl_seconds=0)  # every question expires as soon as it is asked
    await tg.deliver(message_update("deploy"))
    asked = clarification_call(tg)
    tg.new_calls()
    for button in (asked.buttons[0][0], asked.buttons[-1][0]):  # an option, then "Other…"
        await tg.deliver(callback_update(button["callback_data"], 1000))
        calls = tg.new_calls()
        assert [c.method for c in calls] == ["answerCallbackQuery"]
        assert calls[0].params["text"] == "This question has expired; send your request again."
    await tg.deliver(message_update("Vue"))  # a typed reply starts a new turn instead
    assert [c.response for c in runner.calls] == [None, None]


async def test_payloads_that_do_not_fit_the_question_change_nothing(bench):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner)
    await tg.deliver(message_update("deploy"))
    token = clarification_call(tg).buttons[0][0]["callback_data"].split("|")[0]
    tg.new_calls()
    # Form and wizard actions on a choice question, Confirm next to real options, an option past the end.
    for action in ("form", "s1", "S", "yes", "o9"):
        await tg.deliver(callback_update(f"{token}|{action}", 1000))
        assert [c.method for c in tg.new_calls()] == ["answerCallbackQuery"]
    assert [c.response for c in runner.calls] == [None]
    await tg.deliver(callback_update(f"{token}|o2", 1000))  # the question is still open
    assert runner.calls[-1].response.option_id == "option-2"


async def test_a_redelivered_other_tap_asks_once(bench):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner)
    await tg.deliver(message_update("deploy"))
    other = callback_update(clarification_call(tg).buttons[-1][0]["callback_data"], 1000)
    await tg.deliver(other)
    await tg.deliver(other)  # Telegram delivers the update again (its 200 was lost)
    prompts = [c for c in tg.api.of("sendMessage") if (c.markup or {}).get("force_reply")]
    assert len(prompts) == 1
    assert len(tg.api.of("answerCallbackQuery")) == 2  # every delivery is still acknowledged
