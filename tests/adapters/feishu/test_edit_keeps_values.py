"""Edit on Feishu keeps what the person did not change: real lark-oapi against the fake open API,
the real LangGraph agent (scripted model) and a tool recording its exact arguments."""

from __future__ import annotations

from typing import Any

import pytest

from tests.adapters.unchanged_submissions import feishu_form_value
from tests.agent import approval_tools as tools

from .cards import components, payload
from .events import card_action, message_event


@pytest.fixture(autouse=True)
def _fresh() -> None:
    tools.CALLS.clear()


@pytest.fixture
async def runner(tmp_path: Any) -> Any:
    made = tools.approval_runner(tmp_path)
    yield made
    await made.aclose()


def _button(card: dict[str, Any], text: str) -> dict[str, Any]:
    found = [b for b in components(card, "button") if b["text"]["content"].endswith(text)]
    assert found, f"no {text!r} button"
    return found[0]


async def _asked(bot: Any) -> tuple[str, dict[str, Any]]:
    await bot.deliver(message_event("clean up the test data"))
    await bot.gateway.drain()
    return list(bot.api.cards.items())[-1]


async def _edit_form(bot: Any) -> tuple[str, dict[str, Any]]:
    """Ask and click Edit: the form card as Feishu received it."""
    message_id, card = await _asked(bot)
    await bot.click(card_action(payload(_button(card, "Edit")), message_id=message_id))
    await bot.gateway.drain()
    return list(bot.api.cards.items())[-1]


async def _submit(bot: Any, form_id: str, form: dict[str, Any], form_value: dict[str, Any]) -> None:
    submit = payload(_button(form, "Submit"))
    ok = await bot.click(card_action(submit, tag="button", form_value=form_value, message_id=form_id))
    assert ok["toast"]["type"] == "success"
    await bot.gateway.drain()


async def test_edit_submitted_unchanged_runs_the_original_call(make_bot: Any, runner: Any) -> None:
    bot = await make_bot(runner)
    form_id, form = await _edit_form(bot)
    by_tag = {c["tag"]: c for c in components(form, "checker") + components(form, "date_picker")}
    assert by_tag["checker"]["checked"] is True
    assert by_tag["date_picker"]["initial_date"] == "2026-01-31"
    inputs = [c.get("default_value") for c in components(form, "input")]
    assert inputs == ["test_data", "100", '["old", "tmp"]']
    await _submit(bot, form_id, form, feishu_form_value(form))
    assert [tools.typed(c) for c in tools.CALLS] == [tools.typed(tools.ARGS)]


async def test_edit_of_one_field_changes_only_that_argument(make_bot: Any, runner: Any) -> None:
    bot = await make_bot(runner)
    form_id, form = await _edit_form(bot)
    form_value = feishu_form_value(form)
    table = next(c["name"] for c in components(form, "input") if c.get("default_value") == "test_data")
    await _submit(bot, form_id, form, {**form_value, table: "prod_data"})
    assert [tools.typed(c) for c in tools.CALLS] == [tools.typed({**tools.ARGS, "table": "prod_data"})]


async def test_an_unticked_checker_left_out_of_form_value_is_an_edit(make_bot: Any, runner: Any) -> None:
    bot = await make_bot(runner)
    form_id, form = await _edit_form(bot)
    checker = components(form, "checker")[0]["name"]
    form_value = {k: v for k, v in feishu_form_value(form).items() if k != checker}
    await _submit(bot, form_id, form, form_value)
    assert [tools.typed(c) for c in tools.CALLS] == [tools.typed({**tools.ARGS, "dry_run": False})]


async def test_reject_never_runs_the_tool(make_bot: Any, runner: Any) -> None:
    bot = await make_bot(runner)
    message_id, card = await _asked(bot)
    await bot.click(card_action(payload(_button(card, "Reject")), message_id=message_id))
    await bot.gateway.drain()
    assert tools.CALLS == []
