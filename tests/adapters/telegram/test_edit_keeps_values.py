"""Edit on Telegram keeps what the person did not change: real python-telegram-bot against the
fake Bot API, the real LangGraph agent (scripted model) and a tool recording its exact arguments."""

from __future__ import annotations

from typing import Any

import pytest

from clarigate.gateway.store.memory import MemoryStore
from tests.agent import approval_tools as tools

from .harness import callback_update, message_update, open_bench


@pytest.fixture(autouse=True)
def _fresh() -> None:
    tools.CALLS.clear()


async def _bench(bot_api: Any, tmp_path: Any) -> Any:
    runner = tools.approval_runner(tmp_path)
    store = MemoryStore(f"edit-{tmp_path.name}")
    return await open_bench(bot_api, store, runner), runner, store


def _question(bot_api: Any, text: str) -> tuple[int, list[dict[str, Any]]]:
    """The message id and buttons of the last message with a keyboard that says ``text``."""
    sent = bot_api.of("sendMessage")
    index = max(i for i, c in enumerate(sent) if c.markup and text in c.params["text"])
    return 1000 + index, [b for row in sent[index].buttons for b in row]


def _tap(buttons: list[dict[str, Any]], text: str) -> str:
    found = [b["callback_data"] for b in buttons if text in b["text"]]
    assert found, f"no {text!r} button in {[b['text'] for b in buttons]}"
    return str(found[0])


def _step(bot_api: Any) -> tuple[str, list[dict[str, Any]]]:
    """The form message as last shown: its text and buttons."""
    shown = bot_api.of("editMessageText")[-1]
    return shown.params["text"], [b for row in shown.buttons for b in row]


async def _open_form(tg: Any, bot_api: Any) -> int:
    await tg.deliver(message_update("clean up the test data"))
    message_id, buttons = _question(bot_api, "delete_records")
    await tg.deliver(callback_update(_tap(buttons, "Edit"), message_id))
    form_id, form_buttons = _question(bot_api, "Edit the arguments")
    await tg.deliver(callback_update(_tap(form_buttons, "Fill in"), form_id))
    return form_id


async def _fill(tg: Any, bot_api: Any, form_id: int, typed: dict[str, str]) -> dict[str, str]:
    """Go through the steps: type ``typed[field]`` where given, tap Keep elsewhere; Submit.
    What each step showed, by field."""
    shown: dict[str, str] = {}
    for _ in tools.ARGS:
        text, buttons = _step(bot_api)
        name = next(n for n in tools.ARGS if f"· {n}</b>" in text)
        shown[name] = text
        if name in typed:
            await tg.deliver(message_update(typed[name]))
        else:
            await tg.deliver(callback_update(_tap(buttons, "Keep"), form_id))
    await tg.deliver(callback_update(_tap(_step(bot_api)[1], "Submit"), form_id))
    return shown


async def test_keep_on_every_step_runs_the_original_call(bot_api: Any, tmp_path: Any) -> None:
    tg, runner, store = await _bench(bot_api, tmp_path)
    try:
        form_id = await _open_form(tg, bot_api)
        shown = await _fill(tg, bot_api, form_id, {})
        assert "→ test_data" in shown["table"] and "→ 100" in shown["limit"]
        assert "→ 2026-01-31" in shown["before"]
        assert [tools.typed(c) for c in tools.CALLS] == [tools.typed(tools.ARGS)]
    finally:
        await tg.close()
        await runner.aclose()
        await store.close()


async def test_typing_one_field_changes_only_that_argument(bot_api: Any, tmp_path: Any) -> None:
    tg, runner, store = await _bench(bot_api, tmp_path)
    try:
        form_id = await _open_form(tg, bot_api)
        await _fill(tg, bot_api, form_id, {"table": "prod_data"})
        assert [tools.typed(c) for c in tools.CALLS] == [tools.typed({**tools.ARGS, "table": "prod_data"})]
    finally:
        await tg.close()
        await runner.aclose()
        await store.close()


async def test_the_checkbox_step_marks_the_current_answer(bot_api: Any, tmp_path: Any) -> None:
    tg, runner, store = await _bench(bot_api, tmp_path)
    try:
        form_id = await _open_form(tg, bot_api)
        while "· dry_run</b>" not in _step(bot_api)[0]:
            await tg.deliver(callback_update(_tap(_step(bot_api)[1], "Keep"), form_id))
        texts = [b["text"] for b in _step(bot_api)[1]]
        assert "✓ Yes" in texts and "No" in texts
        await tg.deliver(callback_update(_tap(_step(bot_api)[1], "No"), form_id))
        await _fill_rest(tg, bot_api, form_id)
        assert [tools.typed(c) for c in tools.CALLS] == [tools.typed({**tools.ARGS, "dry_run": False})]
    finally:
        await tg.close()
        await runner.aclose()
        await store.close()


async def _fill_rest(tg: Any, bot_api: Any, form_id: int) -> None:
    """Keep on every step left, then Submit."""
    while True:
        buttons = _step(bot_api)[1]
        if any("Submit" in b["text"] for b in buttons):
            await tg.deliver(callback_update(_tap(buttons, "Submit"), form_id))
            return
        await tg.deliver(callback_update(_tap(buttons, "Keep"), form_id))


async def test_reject_never_runs_the_tool(bot_api: Any, tmp_path: Any) -> None:
    tg, runner, store = await _bench(bot_api, tmp_path)
    try:
        await tg.deliver(message_update("clean up the test data"))
        message_id, buttons = _question(bot_api, "delete_records")
        await tg.deliver(callback_update(_tap(buttons, "Reject"), message_id))
        assert tools.CALLS == []
    finally:
        await tg.close()
        await runner.aclose()
        await store.close()


async def test_an_approvals_edit_offers_no_clear_and_a_forged_clear_changes_nothing(
    bot_api: Any, tmp_path: Any
) -> None:
    """Each field shows the argument's current value: emptying it is no edit the person means
    (a form's optional field with a default may be cleared; an approval's Edit may not)."""
    tg, runner, store = await _bench(bot_api, tmp_path)
    try:
        form_id = await _open_form(tg, bot_api)
        text, buttons = _step(bot_api)
        assert "→ test_data" in text and "Keep ▶" in [b["text"] for b in buttons]
        token = _tap(buttons, "Keep").split("|")[0]
        await tg.deliver(callback_update(f"{token}|c", form_id))  # a Clear no step offered
        assert "→ test_data" in _step(bot_api)[0]
        labels: list[str] = []
        while not any("Submit" in b["text"] for b in _step(bot_api)[1]):
            labels += [b["text"] for b in _step(bot_api)[1]]
            await tg.deliver(callback_update(_tap(_step(bot_api)[1], "Keep"), form_id))
        assert not [label for label in labels if "Clear" in label]
        await tg.deliver(callback_update(_tap(_step(bot_api)[1], "Submit"), form_id))
        assert [tools.typed(c) for c in tools.CALLS] == [tools.typed(tools.ARGS)]
    finally:
        await tg.close()
        await runner.aclose()
        await store.close()
