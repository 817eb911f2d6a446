"""A risk confirmation's go-ahead option takes two taps on Telegram: the first only turns the
keyboard into "⚠️ Yes: …" / "◀ Go back"; the answer comes from the second. Real PTB, fake Bot API."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner, Turn, asking
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import HumanInputRequest, Option

from .harness import ALICE, BOB, GROUP, callback_update, mention_update, message_update

LABELS = ["No, keep it", "Yes, delete everything"]
QUESTION_ID = 1000  # the fake server numbers the bot's messages from 1000: the question first


def wipe_request() -> HumanInputRequest:
    return HumanInputRequest(
        request_id="clarification:wipe-1",
        tool_call_id="wipe-1",
        clarification_type="risk_confirmation",
        question="Delete the test data?",
        input_mode="choice_with_other",
        options=[Option(id=f"option-{i}", label=label, value=label) for i, label in enumerate(LABELS, 1)],
    )


def script(turn: Turn) -> TurnOutput:
    if turn.response is None:
        return asking(wipe_request())
    return TurnOutput(replies=[f"Chose {turn.response.value}."])


def answers(runner: ScriptedRunner) -> list[str]:
    return [c.response.value for c in runner.calls if c.response is not None]


async def test_first_tap_only_edits_the_keyboard_and_the_confirm_tap_answers(bench):
    runner = ScriptedRunner(script)
    tg = await bench(runner)
    await tg.deliver(message_update("clean up the test data"))
    asked = next(c for c in tg.api.of("sendMessage") if c.markup)
    original = asked.buttons
    flat = [b["text"] for row in original for b in row]
    assert flat == ["No, keep it", "⚠️ Yes, delete everything", "✖ Cancel"]

    tg.new_calls()
    delete = original[0][1]["callback_data"]
    await tg.deliver(callback_update(delete, QUESTION_ID))
    calls = tg.new_calls()
    assert calls[0].method == "answerCallbackQuery"
    assert calls[0].params["text"] == "Tap “⚠️ Yes: Yes, delete everything” to go ahead."
    [edit] = [c for c in calls if c.method == "editMessageText"]
    assert "Go ahead with “Yes, delete everything”? This may not be reversible." in edit.params["text"]
    assert [[b["text"] for b in row] for row in edit.buttons] == [
        ["⚠️ Yes: Yes, delete everything"],
        ["◀ Go back"],
    ]
    assert answers(runner) == [] and not [c for c in calls if c.method == "sendMessage"]

    await tg.deliver(callback_update(edit.buttons[0][0]["callback_data"], QUESTION_ID))
    assert answers(runner) == ["Yes, delete everything"]
    assert "✅ Answered by Alice: Yes, delete everything" in tg.api.of("editMessageText")[-1].params["text"]
    assert tg.api.of("sendMessage")[-1].params["text"] == "Chose Yes, delete everything."


async def test_go_back_restores_the_question_and_the_safe_choice_answers_in_one_tap(bench):
    runner = ScriptedRunner(script)
    tg = await bench(runner)
    await tg.deliver(message_update("clean up the test data"))
    original = next(c for c in tg.api.of("sendMessage") if c.markup)
    await tg.deliver(callback_update(original.buttons[0][1]["callback_data"], QUESTION_ID))
    back = tg.api.of("editMessageText")[-1].buttons[1][0]

    await tg.deliver(callback_update(back["callback_data"], QUESTION_ID))
    restored = tg.api.of("editMessageText")[-1]
    assert restored.buttons == original.buttons and restored.params["text"] == original.params["text"]
    assert answers(runner) == []

    await tg.deliver(callback_update(original.buttons[0][0]["callback_data"], QUESTION_ID))
    assert answers(runner) == ["No, keep it"]


async def test_someone_who_may_not_answer_cannot_turn_the_keyboard(bench):
    runner = ScriptedRunner(script)
    tg = await bench(runner)
    await tg.deliver(mention_update("clean up the test data", user=ALICE))
    asked = next(c for c in tg.api.of("sendMessage") if c.markup)

    tg.new_calls()
    await tg.deliver(callback_update(asked.buttons[0][1]["callback_data"], QUESTION_ID, user=BOB, chat=GROUP))
    calls = tg.new_calls()
    assert [c.method for c in calls] == ["answerCallbackQuery"]
    assert calls[0].params["text"] == "Only Alice can answer this question."
    assert answers(runner) == []


async def test_a_typed_pick_of_the_go_ahead_option_asks_for_confirm(bench):
    runner = ScriptedRunner(script)
    tg = await bench(runner)
    await tg.deliver(message_update("clean up the test data"))
    await tg.deliver(message_update("2"))
    assert answers(runner) == []
    assert tg.api.of("sendMessage")[-1].params["text"].startswith("Reply “confirm” to go ahead with")
    await tg.deliver(message_update("confirm"))
    assert answers(runner) == ["Yes, delete everything"]


PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
PHOTO = [{"file_id": "shot", "file_unique_id": "ushot", "width": 90, "height": 90, "file_size": len(PNG)}]


async def test_a_photo_sent_with_a_typed_go_ahead_pick_reaches_the_agent_once_confirmed(bench):
    runner = ScriptedRunner(script)
    tg = await bench(runner)
    tg.api.add_file("shot", PNG)
    await tg.deliver(message_update("clean up the test data"))
    await tg.deliver(message_update(None, photo=PHOTO, caption="2"))
    assert answers(runner) == []
    assert tg.api.of("sendMessage")[-1].params["text"].startswith("Reply “confirm” to go ahead with")
    await tg.deliver(message_update("confirm"))
    assert answers(runner) == ["Yes, delete everything"]
    answer = runner.calls[-1]
    assert [image.data for image in answer.images] == [PNG]
    assert "(attached: photo.jpg" in answer.text


async def test_a_photo_sent_with_a_go_ahead_pick_not_confirmed_runs_nothing(bench):
    runner = ScriptedRunner(script)
    tg = await bench(runner)
    tg.api.add_file("shot", PNG)
    await tg.deliver(message_update("clean up the test data"))
    await tg.deliver(message_update(None, photo=PHOTO, caption="2"))
    await tg.deliver(message_update("hmm, wait"))  # not "confirm": the pick is dropped
    assert len(runner.calls) == 1 and answers(runner) == []
    assert "Yes, delete everything" in tg.api.of("sendMessage")[-1].params["text"]
    await tg.deliver(message_update("confirm"))  # nothing waits for it any more
    assert len(runner.calls) == 1 and answers(runner) == []
    assert not tg.api.of("getFile")  # the photo was never fetched for anyone


def rows_request() -> HumanInputRequest:
    """A risk confirmation whose every option goes ahead: none reads as keep / cancel / no."""
    options = [Option(id="option-1", label="Delete all rows", value="all")]
    options.append(Option(id="option-2", label="Delete old rows", value="old"))
    return wipe_request().model_copy(update={"options": options})


async def test_with_no_safe_option_cancel_is_offered_and_dismisses_the_question(bench):
    runner = ScriptedRunner(
        lambda turn: asking(rows_request()) if turn.response is None else TurnOutput(replies=["Left them."])
    )
    tg = await bench(runner)
    await tg.deliver(message_update("clean up the rows"))
    asked = next(c for c in tg.api.of("sendMessage") if c.markup)
    assert [[b["text"] for b in row] for row in asked.buttons] == [
        ["⚠️ Delete all rows", "⚠️ Delete old rows"],
        ["✖ Cancel"],
    ]
    cancel = asked.buttons[-1][0]["callback_data"]
    assert cancel.endswith("|x")  # the Cancel every other Telegram question carries

    # "◀ Go back" from a go-ahead's confirm keyboard brings it back with the options
    await tg.deliver(callback_update(asked.buttons[0][0]["callback_data"], QUESTION_ID))
    back = tg.api.of("editMessageText")[-1].buttons[1][0]
    await tg.deliver(callback_update(back["callback_data"], QUESTION_ID))
    assert tg.api.of("editMessageText")[-1].buttons == asked.buttons

    await tg.deliver(callback_update(cancel, QUESTION_ID))
    declined = [(c.response.response_kind, c.response.option_id) for c in runner.calls if c.response]
    assert declined == [("declined", None)]  # no row deleted: the agent is told Alice declined
    closed = tg.api.of("editMessageText")[-1]
    assert "✖ Cancelled by Alice" in closed.params["text"] and not closed.buttons
    assert tg.api.of("sendMessage")[-1].params["text"] == "Left them."


def declined(runner: ScriptedRunner) -> list[tuple[str, str | None]]:
    return [(c.response.response_kind, c.response.option_id) for c in runner.calls if c.response]


async def test_with_a_safe_option_cancel_is_offered_too_and_dismisses_the_question(bench):
    """ "No, keep it" answers the question (the agent reads that choice); "✖ Cancel" dismisses it,
    as on every other question and on Slack and Feishu: one tap, nothing chosen."""
    runner = ScriptedRunner(
        lambda turn: asking(wipe_request()) if turn.response is None else TurnOutput(replies=["Left it."])
    )
    tg = await bench(runner)
    await tg.deliver(message_update("clean up the test data"))
    asked = next(c for c in tg.api.of("sendMessage") if c.markup)
    assert [[b["text"] for b in row] for row in asked.buttons] == [
        ["No, keep it", "⚠️ Yes, delete everything"],
        ["✖ Cancel"],
    ]
    await tg.deliver(callback_update(asked.buttons[-1][0]["callback_data"], QUESTION_ID))
    assert declined(runner) == [("declined", None)]
    closed = tg.api.of("editMessageText")[-1]
    assert "✖ Cancelled by Alice" in closed.params["text"] and not closed.buttons
    assert tg.api.of("sendMessage")[-1].params["text"] == "Left it."


async def test_an_option_called_cancel_keeps_its_word_and_the_way_out_says_skip(bench):
    """An option already called "Cancel" is an answer (the agent reads it): the button that
    dismisses the question says "Skip" (as Slack's does), never a second "Cancel"."""
    options = [Option(id="option-1", label="Cancel", value="cancel")]
    options.append(Option(id="option-2", label="Yes, delete everything", value="delete"))
    request = wipe_request().model_copy(update={"options": options})
    runner = ScriptedRunner(lambda turn: asking(request) if turn.response is None else TurnOutput())
    tg = await bench(runner)
    await tg.deliver(message_update("clean up the test data"))
    asked = next(c for c in tg.api.of("sendMessage") if c.markup)
    assert [[b["text"] for b in row] for row in asked.buttons] == [
        ["Cancel", "⚠️ Yes, delete everything"],
        ["✖ Skip"],
    ]
    await tg.deliver(callback_update(asked.buttons[0][0]["callback_data"], QUESTION_ID))
    assert declined(runner) == [("option", "option-1")]


async def test_a_yes_drawn_by_the_release_before_asks_again_and_her_new_yes_answers_once(bench):
    """A "⚠️ Yes: …" drawn before buttons said whose pick they confirm (``{token}|Y2``, no owner),
    tapped after an upgrade by the person who picked: it answers nothing, it asks again for her."""
    runner = ScriptedRunner(script)
    tg = await bench(runner)
    await tg.deliver(message_update("clean up the test data"))
    delete = next(c for c in tg.api.of("sendMessage") if c.markup).buttons[0][1]["callback_data"]
    token = delete.split("|")[0]

    tg.new_calls()
    await tg.deliver(callback_update(f"{token}|Y2", QUESTION_ID))  # the old keyboard's "⚠️ Yes"
    calls = tg.new_calls()
    assert calls[0].method == "answerCallbackQuery"
    assert calls[0].params["text"] == "Tap “⚠️ Yes: Yes, delete everything” to go ahead."
    assert calls[0].params.get("show_alert") in (None, "false")  # a toast, not an alert
    [edit] = [c for c in calls if c.method == "editMessageText"]
    assert "Go ahead with “Yes, delete everything”?" in edit.params["text"]
    assert [[(b["text"], b["callback_data"]) for b in row] for row in edit.buttons] == [
        [("⚠️ Yes: Yes, delete everything", f"{token}|Y2:{ALICE['id']}")],
        [("◀ Go back", f"{token}|R")],
    ]
    assert answers(runner) == []

    confirm = callback_update(edit.buttons[0][0]["callback_data"], QUESTION_ID)
    await tg.deliver(confirm)
    await tg.deliver(confirm)  # delivered again (a webhook retry): answered once
    assert answers(runner) == ["Yes, delete everything"]
    assert "✅ Answered by Alice: Yes, delete everything" in tg.api.of("editMessageText")[-1].params["text"]
    assert [c.params["text"] for c in tg.api.of("sendMessage")][-1] == "Chose Yes, delete everything."
