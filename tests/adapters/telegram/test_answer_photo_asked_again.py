"""A photo sent with an answer that does not settle the question (it is asked again) is not lost
silently: the person is told it was not passed on and to send it again with their answer; one sent
with an answer the gateway refuses (a typed form's problems) or takes nowhere (the question closed
first) is said not used. Real python-telegram-bot against the fake Bot API, the real LangGraph
agent (scripted model)."""

from __future__ import annotations

import uuid
from typing import Any

from clarigate.adapters.testing import ScriptedRunner
from clarigate.agent.harness import AgentSettings
from clarigate.agent.protocol import AnsweredBy, answer_declined, catalog
from clarigate.gateway.boundary.people import Sender
from clarigate.gateway.flow.claim import claim_answer
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.store.memory import MemoryStore

from .harness import message_update, open_bench
from .test_approvals import _bench, _close
from .test_wizard import Wizard, script

PNG = b"\x89PNG\r\n\x1a\n" + b"0" * 64
PHOTO = [{"file_id": "pic-1", "file_unique_id": "upic-1", "width": 800, "height": 600, "file_size": len(PNG)}]
NOT_KEPT = (
    "The photo or file sent with your answer was not passed on: the question is asked again. "
    "Send it again with your answer."
)
NOT_USED = "The photo or file sent with your answer was not used: the answer did not go through."
SEATS = "tests.adapters.telegram.test_typed_form_problems:seats"  # a form of twelve seats
SIZING = {  # a Bot API Document
    "file_id": "doc-sizing",
    "file_unique_id": "udoc-sizing",
    "file_name": "sizing.txt",
    "mime_type": "text/plain",
    "file_size": 42,
}


async def test_a_photo_with_edit_typed_is_said_not_passed_on_before_the_form(
    bot_api: Any, tmp_path: Any
) -> None:
    tg, runner, store = await _bench(bot_api, tmp_path)
    try:
        tg.api.add_file("pic-1", PNG)
        await tg.deliver(message_update("clean up the users table"))
        asked = len(bot_api.of("sendMessage"))
        await tg.deliver(message_update(None, caption="Edit", photo=PHOTO))  # the arguments form
        said = [c.params["text"] for c in bot_api.of("sendMessage")[asked:]]
    finally:
        await _close(tg, runner, store)
    # the line comes before the form asked instead, which the answer (and its photo) did not settle
    (told,) = [i for i, text in enumerate(said) if NOT_KEPT in text]
    assert told == 0 and len(said) > 1, said


async def test_a_photo_with_a_typed_answer_the_graph_refuses_is_said_not_passed_on(
    bot_api: Any, tmp_path: Any
) -> None:
    graph = "tests.adapters.telegram.test_typed_form_problems:seats"  # refuses every window seat
    runner = LangGraphRunner(AgentSettings(checkpointer_url="memory://", graph=graph))
    store = MemoryStore(f"seats-photo-{tmp_path.name}")
    tg = await open_bench(bot_api, store, runner)
    try:
        tg.api.add_file("pic-1", PNG)
        await tg.deliver(message_update("seat us"))
        asked = len(bot_api.of("sendMessage"))
        lines = "\n".join(f"seat_{i}: {i}A" for i in range(1, 13))
        await tg.deliver(message_update(None, caption=lines, photo=PHOTO))  # the boarding pass
        sent = bot_api.of("sendMessage")[asked:]
    finally:
        await tg.close()
        await runner.aclose()
        await store.close()
    said = [c.params["text"] for c in sent]
    assert any(NOT_KEPT in text for text in said), said
    assert sent[-1].markup and "Who travels, and when?" in said[-1]  # the form, asked again


async def test_a_photo_with_a_typed_answer_the_gateway_refuses_is_said_not_used(
    bot_api: Any, tmp_path: Any
) -> None:
    runner = LangGraphRunner(AgentSettings(checkpointer_url="memory://", graph=SEATS))
    store = MemoryStore(f"seats-refused-{tmp_path.name}")
    tg = await open_bench(bot_api, store, runner)
    try:
        tg.api.add_file("pic-1", PNG)
        await tg.deliver(message_update("seat us"))
        asked = len(bot_api.of("sendMessage"))
        # one seat of twelve: the gateway's own check refuses it (eleven seats missing), nothing runs
        await tg.deliver(message_update(None, caption="seat_1: 1B", photo=PHOTO))
        said = [c.params["text"] for c in bot_api.of("sendMessage")[asked:]]
    finally:
        await tg.close()
        await runner.aclose()
        await store.close()
    assert any("Seat 2" in text for text in said), said  # what is missing, as before
    assert any(NOT_USED in text for text in said), said


async def test_a_file_with_a_form_submitted_after_someone_else_answered_is_said_not_used(bench: Any) -> None:
    runner = ScriptedRunner(script)
    store = MemoryStore(f"wizard-file-{uuid.uuid4().hex[:8]}")
    tg = await bench(runner, store)
    await tg.deliver(message_update("deploy"))
    w = Wizard(tg)
    for tap in ("form", "s2", "d", "y"):
        await w.tap(tap)
    await tg.deliver(message_update(None, caption="3", document=SIZING))  # Replicas, with a file
    await w.type("2026-12-01")
    await w.tap("k")  # Notes: skipped
    # meanwhile someone else closes the question first (their answer is claimed: another replica)
    view = await tg.gateway.pending_by_token(w.token)
    assert view is not None
    bob = Sender(user_id="222", display_name="Bob")
    by = AnsweredBy(platform="telegram", user_id="222", display_name="Bob")
    await claim_answer(store, view.request.request_id, bob, answer_declined(view.request, by))
    tg.new_calls()
    await w.tap("S")

    said = [c.params["text"] for c in tg.new_calls() if c.method == "sendMessage"]
    assert len(runner.calls) == 1  # nothing ran with Alice's values (nor her file)
    assert any(NOT_USED in text for text in said), said


def test_the_line_is_in_every_language() -> None:
    assert catalog.text("attachment_asked_again", "en").startswith(NOT_KEPT)
    assert catalog.text("attachment_asked_again", "zh").startswith("随回答发送的图片或文件未转交")
    assert catalog.text("attachment_not_used", "en").startswith(NOT_USED)
    assert catalog.text("attachment_not_used", "zh").startswith("随回答发送的图片或文件未被使用")
