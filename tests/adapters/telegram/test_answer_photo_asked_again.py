"""A photo sent with an answer that does not settle the question (it is asked again) is not lost
silently: the person is told it was not passed on and to send it again with their answer. Real
python-telegram-bot against the fake Bot API, the real LangGraph agent (scripted model)."""

from __future__ import annotations

from typing import Any

from clarigate.agent.harness import AgentSettings
from clarigate.agent.protocol import catalog
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.store.memory import MemoryStore

from .harness import message_update, open_bench
from .test_approvals import _bench, _close

PNG = b"\x89PNG\r\n\x1a\n" + b"0" * 64
PHOTO = [{"file_id": "pic-1", "file_unique_id": "upic-1", "width": 800, "height": 600, "file_size": len(PNG)}]
NOT_KEPT = (
    "The photo or file sent with your answer was not passed on: the question is asked again. "
    "Send it again with your answer."
)


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


def test_the_line_is_in_every_language() -> None:
    assert catalog.text("attachment_asked_again", "en").startswith(NOT_KEPT)
    assert catalog.text("attachment_asked_again", "zh").startswith("随回答发送的图片或文件未转交")
