"""A form on a Feishu card says what each field takes and never hides a decision: a checker is marked
required only when unticked is refused, a default too long for its input is shown and kept when left
empty, a cut label, hint or option is shown in full, a number field says it takes a number, and one
submit names every problem at once."""

from __future__ import annotations

from typing import Any

from clarigate.adapters.feishu.actions import read_card_action
from clarigate.adapters.feishu.render import native_card
from clarigate.adapters.testing import ScriptedRunner, asking, form_request
from clarigate.agent.protocol import FormField, HumanInputRequest, Option

from .cards import button, components, payload, walk
from .events import card_action
from .test_scenarios import ask

TOKEN = "tok"


def _markdowns(card: dict[str, Any]) -> str:
    return "\n".join(c["content"] for c in walk(card["body"]) if c.get("tag") == "markdown")


def _submit(request: HumanInputRequest, form_value: dict[str, Any]) -> Any:
    return read_card_action(request, {"value": {"t": TOKEN, "a": "form"}, "form_value": form_value})


def test_a_graphs_required_bool_is_a_yes_or_no_to_pick_never_a_no_left_unticked() -> None:
    flag = FormField(name="flag", label="Delete the backups", type="checkbox", required=True)
    request = form_request("Go?", [flag]).model_copy(update={"source": "langgraph"})
    card = native_card(request, TOKEN)
    assert components(card, "checker") == []
    [pick] = components(card, "select_static")
    assert [o["text"]["content"] for o in pick["options"]] == ["Yes", "No"]
    assert pick["required"] is True and "initial_option" not in pick
    assert "**Delete the backups** (required)" in _markdowns(card)
    assert _submit(request, {}).problems == ["Delete the backups: This field is required"]
    assert _submit(request, {"f1": "no"}).values == {"flag": False}
    assert _submit(request, {"f1": "yes"}).values == {"flag": True}


def test_a_graphs_optional_bool_and_one_with_a_default_stay_checkers() -> None:
    fields = [
        FormField(name="a", label="Optional", type="checkbox"),
        FormField(name="b", label="Defaulted", type="checkbox", required=True, default=False),
    ]
    request = form_request("Go?", fields).model_copy(update={"source": "langgraph"})
    card = native_card(request, TOKEN)
    assert [c["checked"] for c in components(card, "checker")] == [False, False]
    assert components(card, "select_static") == []
    assert _submit(request, {}).values == {"a": False, "b": False}


def test_a_text_default_too_long_for_its_input_is_shown_and_kept_when_left_empty_unit() -> None:
    text = "word " * 300 + "LASTWORD"
    field = FormField(name="notes", label="Notes", type="textarea", required=True, default=text)
    card = native_card(form_request("Notes?", [field]), TOKEN)
    [box] = components(card, "input")
    assert "default_value" not in box and box["required"] is False  # Feishu lets it be sent empty
    assert "LASTWORD" in _markdowns(card) and "Left empty, this keeps:" in _markdowns(card)


async def test_a_required_long_default_left_empty_is_submitted_as_shown(make_bot: Any) -> None:
    text = "line of the release notes " * 50 + "LASTWORD"
    field = FormField(name="notes", label="Notes", type="textarea", required=True, default=text)
    bot = await make_bot(ScriptedRunner(lambda turn: asking(form_request("Notes?", [field]))))
    message_id, card = await ask(bot, "write them")
    assert "LASTWORD" in _markdowns(card)
    [box] = components(card, "input")
    assert box["required"] is False
    done = await bot.click(
        card_action(payload(button(card, "Submit")), form_value={"f1": ""}, message_id=message_id)
    )
    assert done["toast"]["type"] == "success", done
    await bot.gateway.drain()
    assert bot.runner.calls[-1].response.values == {"notes": text}


def test_an_unticked_consent_is_reported_with_every_other_problem() -> None:
    fields = [
        FormField(name="agree", label="I agree", type="checkbox", required=True),
        FormField(name="name", label="Your name", required=True),
        FormField(name="count", label="How many", type="number"),
    ]
    read = _submit(form_request("Sign?", fields), {"f1": False, "f2": "", "f3": "many"})
    assert read.values is None
    assert [p.split(":")[0] for p in read.problems] == ["I agree", "Your name", "How many"]


def test_a_long_consent_label_keeps_its_mark_and_is_shown_in_full() -> None:
    label = "I have read the terms " * 8 + "LASTWORD"
    consent = FormField(name="agree", label=label, type="checkbox", required=True)
    card = native_card(form_request("Sign?", [consent]), TOKEN)
    [checker] = components(card, "checker")
    assert checker["text"]["content"].endswith("(required)")
    assert "LASTWORD" in _markdowns(card)


def test_long_choices_of_a_form_field_are_listed_in_full() -> None:
    options = [
        Option(id=f"o{n}", value=f"plan-{n}", label="a long description of the plan " * 4 + f"PLAN{n}")
        for n in (1, 2)
    ]
    fields = [
        FormField(name="plan", label="Plan", type="select", options=options),
        FormField(name="extras", label="Extras", type="multi_select", options=options),
    ]
    card = native_card(form_request("Which?", fields), TOKEN)
    shown = _markdowns(card)
    assert shown.count("PLAN1") == 2 and shown.count("PLAN2") == 2


def test_a_long_placeholder_is_shown_in_full_as_a_note() -> None:
    hint = "describe what you need in a few words " * 4 + "HINTEND"
    card = native_card(form_request("What?", [FormField(name="need", label="Need", placeholder=hint)]), TOKEN)
    assert "HINTEND" in _markdowns(card)


def test_a_number_field_says_it_takes_a_number() -> None:
    field = FormField(name="count", label="How many", type="number")
    request = form_request("How many?", [field])
    [box] = components(native_card(request, TOKEN), "input")
    assert box["placeholder"]["content"] == "Your answer — a number"
    [box] = components(native_card(request.model_copy(update={"locale": "zh"}), TOKEN), "input")
    assert box["placeholder"]["content"] == "您的回答 — 数字"
