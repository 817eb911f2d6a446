"""A question's form on a Feishu card (pure): one component per field, named by position (``f1``
…), each under its label and over its notes, and a submit button.

Nothing a field says is lost to Feishu's limits or hidden from the person: a label, a hint or an
option cut to fit its plain text is shown in full in markdown beside it, and a text default longer
than an input takes (``actions.INPUT_MAX_LENGTH``) is shown under its empty input, which is then
not required client-side (left empty, the field keeps that default). A checker is marked required
only when the submit refuses it unticked (``actions.must_tick``, a consent of the agent's own
form). A yes/no whose untouched "no" nobody gave would count (``actions.asks_yes_or_no``: a graph's
required bool with no default, or a risk form's box without one whose "no" goes ahead, "Keep the
backups") is no checker but a required ``select_static`` of Yes and No with nothing picked:
Feishu will not submit it unpicked, and a submit without the pick is refused all the same.

A risk form never shows a decision as made (``risk.hides_default``, as Slack's modal): a field
whose default goes ahead (a box ticked, a select's option that does not read safe, "drop_table")
is shown with nothing picked and required (a box as that Yes / No select), a note under it naming
what the agent proposed; a submit without the pick is refused, naming the field. Any other form
is shown filled in.
"""

from __future__ import annotations

from typing import Any

from clarigate.agent.protocol import FormField, HumanInputRequest, ui_text
from clarigate.agent.protocol.models import Locale
from clarigate.agent.protocol.risk import hides_default, is_risk_form

from .actions import (
    ACTION_CHECK,
    ACTION_FORM,
    ACTION_OTHER_TEXT,
    INPUT_MAX_LENGTH,
    OTHER_INPUT,
    YES_NO,
    asks_yes_or_no,
    field_name,
    input_default,
    must_tick,
    option_action,
    shown_empty,
)
from .card_parts import (
    PLAIN_TEXT_CHARS,
    button,
    callback,
    confirm_dialog,
    markdown,
    note,
    option_list,
    plain,
    select_options,
)
from .markup import cut, inline_markdown

#: A checker's text: a little more than other plain texts, as it carries its label.
CHECKER_TEXT_CHARS = PLAIN_TEXT_CHARS + 20


def field_label(f: FormField, locale: Locale) -> dict[str, str]:
    """The bold label above a form component, marked required or optional."""
    mark = ui_text("field_required" if f.required else "field_optional", locale)  # "（必填）" in zh
    return {"tag": "markdown", "content": f"**{inline_markdown(f.label)}**{mark}"}


def placeholder(f: FormField, locale: Locale) -> str:
    """The field's hint, else what to put in: "Your answer" ("… — a number" for a number)."""
    if f.placeholder:
        return f.placeholder
    if f.type == "number":
        return ui_text("your_answer", locale) + ui_text("field_number", locale)
    return ui_text("your_answer" if f.type in ("text", "textarea") else "choose", locale)


def checker(f: FormField, name: str, token: str, locale: Locale, consent: bool) -> list[dict[str, Any]]:
    """A checker carrying its own label, marked required when it must be ticked (``consent``),
    the label in full above it when its text shows it cut (the mark always kept). Feishu documents
    a checker without ``behaviors`` as ticked "locally only": it gets a callback (answered with
    nothing) so its state is the one the submit reports."""
    mark = ui_text("field_required", locale) if consent else ""
    label = f.label.strip()
    text = cut(label, CHECKER_TEXT_CHARS - len(mark)) + mark
    component = {
        "tag": "checker",
        "name": name,
        "checked": f.default is True,
        "text": plain(text, CHECKER_TEXT_CHARS),
        "behaviors": callback(token, ACTION_CHECK, locale),
    }
    full = [markdown(label + mark)] if cut(label, CHECKER_TEXT_CHARS - len(mark)) != label else []
    return [*full, component]


def yes_no_select(name: str, locale: Locale) -> dict[str, Any]:
    """A required ``select_static`` of Yes and No, nothing picked (``actions.asks_yes_or_no``);
    the field's hint shows under it (``field_notes``)."""
    return {
        "tag": "select_static",
        "name": name,
        "placeholder": plain(ui_text("choose", locale)),
        "required": True,
        "options": [{"text": plain(ui_text(value, locale)), "value": value} for value in YES_NO],
    }


def field_component(f: FormField, index: int, locale: Locale) -> dict[str, Any]:
    """The form component for a field other than a checkbox, filled in with the field's default
    (``default_value``, ``initial_option``, ``selected_values``, ``initial_date``) so a submit
    that changes nothing gives the default back."""
    name = field_name(index)
    hint = plain(placeholder(f, locale))
    if f.type in ("select", "multi_select"):
        return _choice_component(f, name, hint)
    if f.type == "date":
        component = {"tag": "date_picker", "name": name, "placeholder": hint, "required": f.required}
        if isinstance(f.default, str):
            component["initial_date"] = f.default
        return component
    # a default too long for the input shows under it: left empty, the field keeps it
    component = {
        "tag": "input",
        "name": name,
        "placeholder": hint,
        "required": f.required and not shown_empty(f),
    }
    if f.type == "textarea":
        component.update(input_type="multiline_text", rows=3)
    shown = input_default(f)
    if shown is not None:
        component["default_value"] = shown
    component.update(_max_length(f, shown))
    return component


def _max_length(f: FormField, shown: str | None) -> dict[str, int]:
    """A text's ``maxLength`` as the input's ``max_length`` (Feishu takes 1 to 1,000), so Feishu
    stops the person there; none past that, or when the text shown is already longer (the submit
    says so: ``actions.form_problems``). Feishu's input has no minimum length nor number range."""
    high = (f.bounds or {}).get("maxLength")
    if f.type not in ("text", "textarea") or isinstance(high, bool) or not isinstance(high, int | float):
        return {}
    if not float(high).is_integer() or not 1 <= high <= INPUT_MAX_LENGTH or len(shown or "") > high:
        return {}
    return {"max_length": int(high)}


def _choice_component(f: FormField, name: str, hint: dict[str, str]) -> dict[str, Any]:
    """``select_static`` / ``multi_select_static``; options valued by position (``o1`` …)."""
    chosen = f.default if isinstance(f.default, list) else [f.default]
    picked = [option_action(i) for i, o in enumerate(f.options, 1) if o.value in chosen]
    component: dict[str, Any] = {
        "tag": "select_static" if f.type == "select" else "multi_select_static",
        "name": name,
        "placeholder": hint,
        "required": f.required,
        "options": select_options(f.options),
    }
    if picked and f.type == "select":
        component["initial_option"] = picked[0]
    elif picked:
        component["selected_values"] = picked
    return component


def field_notes(f: FormField, locale: Locale) -> list[dict[str, Any]]:
    """What shows under a field: a default too long for its input, in full, and the field's hint
    where Feishu would not show it whole (under a checker or a value shown, or cut to fit)."""
    notes = []
    if shown_empty(f) and isinstance(f.default, str):
        notes.append(note(f"{ui_text('kept_if_empty', locale)}\n{f.default}"))
    hint = (f.placeholder or "").strip()
    hidden = f.type == "checkbox" or f.default is not None or len(hint) > PLAIN_TEXT_CHARS
    if hint and hidden:
        notes.append(note(hint))
    return notes


def proposed(request: HumanInputRequest, f: FormField) -> list[dict[str, Any]]:
    """The note naming a risk form's default shown unpicked (``risk.hides_default``): "Proposed:
    Yes. Nothing is picked for you…" or the default options' labels; none without a default."""
    if f.default is None or not hides_default(request, f):
        return []
    if f.type == "checkbox":
        value = ui_text("yes" if f.default is True else "no", request.locale)
    else:
        chosen = f.default if isinstance(f.default, list) else [f.default]
        value = ", ".join(o.label.strip() for o in f.options if o.value in chosen)
    return [note(ui_text("slack_proposed", request.locale, value=value))]


def field_elements(request: HumanInputRequest, f: FormField, index: int, token: str) -> list[dict[str, Any]]:
    """One field's label, options in full (when cut), component and notes; a risk form's default
    that goes ahead is not filled in: the field shows unpicked and required, its note naming it."""
    loc = request.locale
    shown = f.model_copy(update={"default": None, "required": True}) if hides_default(request, f) else f
    if asks_yes_or_no(request, f):  # to pick, never "no" (or a proposed "yes") untouched
        above = [
            field_label(shown.model_copy(update={"required": True}), loc),
            yes_no_select(field_name(index), loc),
        ]
    elif f.type == "checkbox":  # a checker carries its own label
        above = checker(shown, field_name(index), token, loc, must_tick(request, f))
    else:
        above = [
            field_label(shown, loc),
            *option_list(f.options, PLAIN_TEXT_CHARS),
            field_component(shown, index, loc),
        ]
    return [*above, *proposed(request, f), *field_notes(shown, loc)]


def form_container(request: HumanInputRequest, token: str) -> dict[str, Any]:
    """A ``form`` with one component per field and a submit button."""
    loc = request.locale
    elements: list[dict[str, Any]] = []
    for index, f in enumerate(request.fields, 1):
        elements.extend(field_elements(request, f, index, token))
    dialog = confirm_dialog(loc) if is_risk_form(request) else None
    submit = button(ui_text("submit", loc), token, ACTION_FORM, "primary", dialog, loc)
    submit.update(name="submit_answer", form_action_type="submit")
    elements.append(submit)
    return {"tag": "form", "name": "answer", "elements": elements}


def other_form(request: HumanInputRequest, token: str) -> dict[str, Any]:
    """The "Other…" answer: one text input and a submit button, in a form."""
    loc = request.locale
    submit = button(ui_text("submit", loc), token, ACTION_OTHER_TEXT, "primary", locale=loc)
    submit.update(name="submit_other", form_action_type="submit")
    field = {
        "tag": "input",
        "name": OTHER_INPUT,
        "required": True,
        "placeholder": plain(ui_text("your_answer", loc)),
    }
    return {"tag": "form", "name": "other", "elements": [field, submit]}
