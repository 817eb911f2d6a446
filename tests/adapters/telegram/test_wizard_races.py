"""Two fast inputs on a form's summary: "✅ Submit" with another tap, or with ``/cancel``.

A double tap or a laggy client sends "✅ Submit" and "✏️ Edit" (or "◀ Back", a stale value or
Skip tap) almost together. Whatever the order they are handled in, the answer is taken once and
the message ends "✅ Answered by …": the other tap, let through while the question was open,
neither saves the wizard again (its pointer would take the next typed message as a value) nor
draws the form over the answer, and is told the question is already answered.

After ``/cancel`` the form is closed at once (its question a moment later, by the gateway): a tap
on it then is told so and neither reopens nor redraws it. A redraw already on its way when the
question closes never stays over "✅ Answered by …" / "✖ Cancelled by …".

Each test pins one interleaving: the late input waits at a point of its handling (``Pause``)
while the other one runs to its end.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from clarigate.adapters.telegram import forms as forms_module
from clarigate.adapters.testing import ScriptedRunner

from .conftest import redis_store
from .harness import ALICE, TelegramBench, callback_update, command_update, message_update
from .test_wizard import Wizard, script

ALREADY = "You already answered this question."


class Pause:
    """Hold the first call of ``owner.name`` that ``when`` picks (before the original runs, or
    after it when ``after``) until ``release`` is set; ``reached`` tells it is held."""

    def __init__(
        self,
        monkeypatch: pytest.MonkeyPatch,
        owner: Any,
        name: str,
        when: Callable[..., bool] = lambda *args: True,
        after: bool = False,
    ) -> None:
        self.reached, self.release = asyncio.Event(), asyncio.Event()
        original = getattr(owner, name)

        async def held(*args: Any) -> Any:
            if self.reached.is_set() or not when(*args):
                return await original(*args)
            result = await original(*args) if after else None
            self.reached.set()
            await self.release.wait()
            return result if after else await original(*args)

        monkeypatch.setattr(owner, name, held)


def shown_again_on_cancel(monkeypatch: pytest.MonkeyPatch) -> None:
    """``/cancel`` shows the question again before the gateway closes it, as it does for a form its
    gateway does not close with the form message's own edit (posted anew after an upgrade:
    ``form_message.closed_by_command``); here, on the question's message, to race that redraw."""

    async def kept(*args: Any) -> bool:
        return False

    monkeypatch.setattr(forms_module, "closed_by_command", kept)


def tapping(code: str) -> Callable[..., bool]:
    """Picks ``Forms.tap(view, who, code, event_id, state)`` calls of one button."""
    return lambda view, who, tapped, event_id, state: tapped == code


@pytest.fixture(params=["memory", "redis"])
async def on_summary(request, bench, redis_prefix) -> Any:
    """Alice's form filled in up to its summary (on the memory or the Redis store)."""
    store = redis_store(redis_prefix) if request.param == "redis" else None
    runner = ScriptedRunner(script)
    tg = await bench(runner, store=store)
    await tg.deliver(message_update("deploy"))
    w = Wizard(tg)
    await w.tap("form")
    for action in ("s2", "d", "y"):
        await w.tap(action)
    await w.type("3")
    await w.type("2026-12-01")
    await w.tap("k")
    assert "Please check your answers:" in w.shown.params["text"]
    yield tg, w
    await tg.close()
    if store is not None:
        await store.close()


async def answered_once(tg: TelegramBench, w: Wizard) -> None:
    """The form was submitted once, its message shows the answer, and no wizard is left."""
    responses = [c.response for c in tg.runner.calls if c.response]
    assert [r.values["framework"] for r in responses] == ["Vue"]
    shown = tg.api.shown(ALICE["id"], w.message_id) or ""
    assert "✅ Answered by Alice" in shown, f"the form message shows: {shown!r}"
    forms = tg.adapter.interactions.forms
    assert await forms.active(str(ALICE["id"]), str(ALICE["id"])) is None  # no pointer for typed input
    assert await forms.load(responses[0].request_id, str(ALICE["id"])) is None


def told(tg: TelegramBench, update: dict[str, Any]) -> dict[str, Any]:
    """What the tap of ``update`` was answered with (``answerCallbackQuery``)."""
    query = update["callback_query"]["id"]
    return next(c.params for c in tg.api.of("answerCallbackQuery") if c.params["callback_query_id"] == query)


async def race(tg: TelegramBench, w: Wizard, late: dict[str, Any], pause: Pause) -> None:
    """Send ``late``; once it is held, tap Submit and let that finish; then let ``late`` go on."""
    held = asyncio.create_task(tg.post(late))
    await asyncio.wait_for(pause.reached.wait(), 5)
    assert (await tg.post(callback_update(f"{w.token}|S", w.message_id))).status_code == 200
    pause.release.set()
    assert (await held).status_code == 200
    await tg.settle()


@pytest.mark.parametrize("code", ["E", "b", "s1", "k"])
async def test_a_tap_with_submit_saved_after_the_answer_does_not_reopen_the_form(
    on_summary, monkeypatch, code
):
    tg, w = on_summary
    late = callback_update(f"{w.token}|{code}", w.message_id)
    # let through while the question was open, it saves the wizard only after the Submit is done
    pause = Pause(monkeypatch, tg.adapter.interactions.forms, "tap", tapping(code))
    await race(tg, w, late, pause)
    await answered_once(tg, w)
    assert told(tg, late)["text"] == ALREADY and told(tg, late)["show_alert"] == "true"


async def test_an_edit_let_through_before_the_submit_finds_no_wizard_and_opens_none(on_summary, monkeypatch):
    tg, w = on_summary
    late = callback_update(f"{w.token}|E", w.message_id)
    # past the "may Alice answer?" check, it looks for her wizard only after the Submit ended it
    pause = Pause(monkeypatch, tg.adapter.interactions, "_refusal", after=True)
    await race(tg, w, late, pause)
    await answered_once(tg, w)
    assert told(tg, late)["text"] == ALREADY and told(tg, late)["show_alert"] == "true"


async def test_an_edit_taken_before_the_submit_is_not_drawn_over_the_answer(on_summary, monkeypatch):
    tg, w = on_summary
    late = callback_update(f"{w.token}|E", w.message_id)
    # the Edit is taken (the question was open), its redraw runs once the Submit is done
    pause = Pause(monkeypatch, tg.adapter.interactions.forms, "tap", tapping("E"), after=True)
    await race(tg, w, late, pause)
    await answered_once(tg, w)
    assert "text" not in told(tg, late)  # taken, so no alert: it was simply overtaken by the Submit


async def test_submit_with_cancel_ends_showing_the_answer(on_summary, monkeypatch):
    tg, w = on_summary
    shown_again_on_cancel(monkeypatch)
    forms = tg.adapter.interactions.forms
    submit_held = Pause(monkeypatch, forms, "tap", tapping("S"))
    # /cancel ends the wizard and would show the question again: that edit waits for the Submit
    cancel_held = Pause(monkeypatch, forms.after_ack, "run")  # the first edit after the taps: /cancel's
    submit = asyncio.create_task(tg.post(callback_update(f"{w.token}|S", w.message_id)))
    await asyncio.wait_for(submit_held.reached.wait(), 5)
    cancel = asyncio.create_task(tg.post(command_update("/cancel")))
    await asyncio.wait_for(cancel_held.reached.wait(), 5)
    submit_held.release.set()
    assert (await submit).status_code == 200
    cancel_held.release.set()
    assert (await cancel).status_code == 200
    await tg.settle()
    await answered_once(tg, w)


@pytest.mark.parametrize("code", ["S", "E", "b", "s1"])
@pytest.mark.parametrize("closed", [False, True], ids=["before-the-gateway-closed-it", "after"])
async def test_a_tap_after_cancel_is_told_the_form_is_closed_and_opens_nothing(
    on_summary, monkeypatch, code, closed
):
    tg, w = on_summary
    # /cancel is acknowledged (the form ends at once); the gateway closes the question in a worker
    gateway_cancel = Pause(monkeypatch, tg.gateway.control, "handle")
    assert (await tg.post(command_update("/cancel"))).status_code == 200
    await asyncio.wait_for(gateway_cancel.reached.wait(), 5)
    if closed:
        gateway_cancel.release.set()
        await tg.settle()
        assert "✖ Cancelled by Alice" in (tg.api.shown(ALICE["id"], w.message_id) or "")
    tg.new_calls()
    late = callback_update(f"{w.token}|{code}", w.message_id)

    assert (await tg.post(late)).status_code == 200
    drawn = [c.params["text"] for c in tg.new_calls() if c.method == "editMessageText"]
    gateway_cancel.release.set()
    await tg.settle()

    said = told(tg, late)
    assert said["show_alert"] == "true"
    assert said["text"] == ("Alice cancelled this question." if closed else "That form is closed.")
    assert not any("1/6" in text or "Please check" in text for text in drawn), drawn  # no form redrawn
    shown = tg.api.shown(ALICE["id"], w.message_id) or ""
    assert "✖ Cancelled by Alice" in shown, f"the form message shows: {shown!r}"
    forms = tg.adapter.interactions.forms
    assert await forms.active(str(ALICE["id"]), str(ALICE["id"])) is None  # nothing takes typed input
    responses = [c.response for c in tg.runner.calls if c.response]
    assert [r.response_kind for r in responses] == ["declined"]  # the agent heard only of the /cancel


async def test_a_redraw_on_its_way_when_the_submit_lands_does_not_stay_over_the_answer(
    on_summary, monkeypatch
):
    tg, w = on_summary
    # "✏️ Edit" is taken and its redraw (step 1) is sent; Telegram gets it after the Submit's edit
    redraw = Pause(monkeypatch, tg.adapter.sender, "edit", lambda chat, message, drawn: "1/6" in drawn.text)
    await race(tg, w, callback_update(f"{w.token}|E", w.message_id), redraw)
    await answered_once(tg, w)


async def test_the_question_shown_again_on_cancel_does_not_stay_over_the_answer(on_summary, monkeypatch):
    tg, w = on_summary
    shown_again_on_cancel(monkeypatch)
    # /cancel ends the form and shows the question again; that edit is on its way when a tap on
    # "✖ Cancel" (there again) closes the question first
    shown_again = Pause(
        monkeypatch, tg.adapter.sender, "edit", lambda chat, message, drawn: "📝 Fill in" in str(drawn)
    )
    cancel = asyncio.create_task(tg.post(command_update("/cancel")))
    await asyncio.wait_for(shown_again.reached.wait(), 5)
    assert (await tg.post(callback_update(f"{w.token}|x", w.message_id))).status_code == 200
    shown_again.release.set()
    assert (await cancel).status_code == 200
    await tg.settle()
    shown = tg.api.shown(ALICE["id"], w.message_id) or ""
    assert "✖ Cancelled by Alice" in shown, f"the form message shows: {shown!r}"
