"""The short payloads cards carry, and turning a callback back into an answer.

A callback value is ``{"t": token, "a": action, "l": locale}``. Actions: ``o<N>`` picks
option N (1-based), ``sel`` a select menu (the picked ``o<N>`` is in ``action.option``),
``other`` opens the "Other…" input, ``otx`` submits it, ``form`` submits the form,
``yes`` answers a risk confirmation that came without options, ``x`` dismisses the
question (Cancel, on every card), ``chk`` is a checker ticked inside a form (its value
travels with the submit). The locale lets a card nobody knows any more still be
answered in its own language. Form components are named ``f<N>`` after the field's position;
a yes/no the person must pick (``asks_yes_or_no``) is a select whose options are ``yes`` / ``no``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from clarigate.agent.protocol import FormField, HumanInputRequest, check_form_values, number_text, ui_text
from clarigate.agent.protocol.bounds import bound_error
from clarigate.agent.protocol.models import SOURCE
from clarigate.agent.protocol.risk import hides_default

ACTION_SELECT = "sel"
ACTION_OTHER = "other"
ACTION_OTHER_TEXT = "otx"
ACTION_FORM = "form"
ACTION_DECLINE = "x"
ACTION_CHECK = "chk"
OTHER_INPUT = "other_text"
#: The option values of a yes/no select (``asks_yes_or_no``), in the order shown.
YES_NO = ("yes", "no")

_OPTION = re.compile(r"^o(\d{1,3})$")
_FIELD = re.compile(r"^f(\d{1,3})$")
_DATE = re.compile(r"^(\d{4}-\d{2}-\d{2})")


def option_action(index: int) -> str:
    """The payload for option number ``index`` (1-based)."""
    return f"o{index}"


def field_name(index: int) -> str:
    """The component name of field number ``index`` (1-based)."""
    return f"f{index}"


@dataclass(frozen=True)
class CardAnswer:
    """What a click or submit says, before the core checks it."""

    option_id: str | None = None
    text: str | None = None
    values: dict[str, Any] | None = None
    opens_other: bool = False  # "Other…": show the input, answer nothing yet
    decline: bool = False  # Cancel: the person dismissed the question
    ignore: bool = False  # nothing to answer yet (a checker ticked inside a form)
    problems: list[str] = field(default_factory=list)  # why the click cannot be read


def picked_option(request: HumanInputRequest, action: str | None) -> str | None:
    """The option id an ``o<N>`` payload points at, if it points at one."""
    match = _OPTION.match(action or "")
    if not match:
        return None
    index = int(match.group(1))
    return request.options[index - 1].id if 0 < index <= len(request.options) else None


def read_card_action(request: HumanInputRequest, action: dict[str, Any]) -> CardAnswer:
    """Turn a ``card.action.trigger`` action (value, option, form_value) into an answer."""
    value = action.get("value") or {}
    kind = str(value.get("a", "")) if isinstance(value, dict) else ""
    loc = request.locale
    if kind == ACTION_OTHER:
        return CardAnswer(opens_other=True)
    if kind == ACTION_DECLINE:
        return CardAnswer(decline=True)
    if kind == ACTION_CHECK:
        return CardAnswer(ignore=True)
    if kind in ("yes", "no"):  # "no": the Cancel of risk cards sent before Cancel declined
        return CardAnswer(text=ui_text("confirm" if kind == "yes" else "cancel", loc))
    if kind == ACTION_OTHER_TEXT:
        text = str(
            (action.get("form_value") or {}).get(OTHER_INPUT) or action.get("input_value") or ""
        ).strip()
        missing = f"{ui_text('your_answer', loc)}: {ui_text('required', loc)}"
        return CardAnswer(text=text) if text else CardAnswer(problems=[missing])
    if kind == ACTION_FORM:
        values = form_values(request, action.get("form_value") or {})
        problems = form_problems(request, values)
        return CardAnswer(problems=problems) if problems else CardAnswer(values=values)
    picked = action.get("option") if kind == ACTION_SELECT else kind
    option_id = picked_option(request, picked)
    if option_id is None:
        return CardAnswer(problems=[ui_text("expired", loc)])
    return CardAnswer(option_id=option_id)


def must_tick(request: HumanInputRequest, f: FormField) -> bool:
    """A required checkbox of a form the agent asks (``ask_clarification``): a consent, to be ticked.
    A form from a graph (an interrupt's ``response_schema`` bool, its own form) takes unticked as no."""
    return f.type == "checkbox" and f.required and request.source == SOURCE


def asks_yes_or_no(request: HumanInputRequest, f: FormField) -> bool:
    """A checkbox whose value as shown the person never gave would count: a required one without a
    default (a graph's typed bool), or a risk form's whose default (ticked) or untouched "no" ("Keep
    the backups") goes ahead (``risk.hides_default``). It is a Yes / No select with nothing picked,
    required, so that a submit never answers it for them; a consent of the agent's own form stays a
    box (``must_tick``), shown unticked when its default is hidden."""
    if f.type != "checkbox" or must_tick(request, f):
        return False
    return hides_default(request, f) or (f.required and f.default is None)


def form_problems(request: HumanInputRequest, values: dict[str, Any]) -> list[str]:
    """When a required consent is left unticked (the core takes an unticked box as "no"), a yes/no
    left unpicked (``asks_yes_or_no``), a risk form's field shown without its default left so
    (``risk.hides_default``: the core would take the default) or a value is outside its field's
    bounds (``FormField.bounds``: said at once, the card kept, not asked again once answered), every
    problem of the submit, in field order: those and the core's own (one toast says all)."""
    undecided = {
        f.name
        for f in request.fields
        if (must_tick(request, f) and not values.get(f.name))
        or (
            (asks_yes_or_no(request, f) or hides_default(request, f)) and values.get(f.name) in (None, "", [])
        )
    }
    check = check_form_values(request, values)
    outside = {
        f.name: error
        for f in request.fields
        if (error := bound_error(f, check.values.get(f.name), request.locale)) is not None
    }
    if not undecided and not outside:
        return []
    errors = {**check.errors, **outside}
    required = ui_text("err_required", request.locale)
    return [
        f"{f.label}: {required if f.name in undecided else errors[f.name]}"
        for f in request.fields
        if f.name in undecided or f.name in errors
    ]


#: An input's ``max_length`` is at most 1000; a longer default is shown under the input, which shows
#: empty (left empty, the field keeps it: ``form_card``).
INPUT_MAX_LENGTH = 1000


def input_default(f: FormField) -> str | None:
    """The text an input shows for the field's default; None when it has none or it is longer
    than an input takes (the input shows empty, the default under it, and left empty the field
    keeps its default)."""
    shown = number_text(f.default) if f.type == "number" else f.default
    return shown if isinstance(shown, str) and len(shown) <= INPUT_MAX_LENGTH else None


def form_values(request: HumanInputRequest, form_value: dict[str, Any]) -> dict[str, Any]:
    """Raw values by field name, option positions turned back into option values.

    Feishu's documented shapes: an input as a string, ``select_static`` as the picked
    value, ``multi_select_static`` as a list, a ``checker`` as a boolean, a
    ``date_picker`` as ``"2024-04-01 +0800"`` (the date and the person's UTC offset).
    Older clients' variants are flattened too (a checker as "true" or a list, a bare
    date); typing and required checks are the core's (``check_form_values``). An unticked
    checker left out is False; a yes/no select left unpicked is left out (``asks_yes_or_no``).
    """
    raw: dict[str, Any] = {}
    for key, value in form_value.items():
        match = _FIELD.match(str(key))
        if not match or not 0 < int(match.group(1)) <= len(request.fields):
            continue
        f = request.fields[int(match.group(1)) - 1]
        value = field_value(f, value)
        if value in (None, "", []) and shown_empty(f):
            continue  # a default too long for its input showed empty: left so, the field keeps it
        raw[f.name] = "" if value is None or value == [] else value  # emptied: blank, not its default
    for f in request.fields:  # an unticked checker may be left out of form_value
        if f.type == "checkbox" and f.name not in raw and not asks_yes_or_no(request, f):
            raw[f.name] = False
    return raw


def shown_empty(f: FormField) -> bool:
    """A field with a default its input did not show (text longer than an input takes)."""
    plain_input = f.type not in ("select", "multi_select", "date", "checkbox")
    return f.default is not None and plain_input and input_default(f) is None


def field_value(f: FormField, value: Any) -> Any:
    """One raw component value as the core expects it for ``f``."""
    if f.type in ("select", "multi_select"):
        picked = value if isinstance(value, list) else [value]
        labels = [_option_value(f, str(p)) for p in picked if p not in (None, "")]
        return labels if f.type == "multi_select" else (labels[0] if labels else None)
    if f.type == "checkbox":
        if isinstance(value, list):
            return bool(value)
        if isinstance(value, str) and value.lower() in ("true", "false", *YES_NO):
            return value.lower() in ("true", "yes")  # a checker's, or a yes/no select's pick
        return value
    if f.type == "date" and isinstance(value, str):
        match = _DATE.match(value.strip())
        return match.group(1) if match else value
    return value


def _option_value(f: FormField, picked: str) -> str:
    match = _OPTION.match(picked)
    if match and 0 < int(match.group(1)) <= len(f.options):
        return f.options[int(match.group(1)) - 1].value
    return picked  # not one of ours: the core says it is not an option
