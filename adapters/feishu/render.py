"""Pure renderers: clarification requests and agent replies -> Feishu card JSON 2.0.

No I/O here. Interactive parts carry a callback value ``{"t": token, "a": action}``
(see ``actions.py``), never option text; form components are named ``f1`` … and
select options valued ``o1`` …, so nothing the model wrote ends up in a name or a
payload. Model text goes through ``escape_markdown`` (markdown) or ``plain``
(plain_text, which Feishu shows literally).
"""

from __future__ import annotations

import json
import re
from typing import Any

from agent.protocol import FormField, HumanInputRequest, Option, ui_text
from agent.protocol.models import Locale

from .actions import (
    ACTION_FORM,
    ACTION_OTHER,
    ACTION_OTHER_TEXT,
    ACTION_SELECT,
    OTHER_INPUT,
    field_name,
    option_action,
)
from .markup import cut, escape_markdown, split_reply

#: Feishu rejects a card message whose request body is above 30 KB; the card travels
#: in it as a JSON string, so that is what is measured, with room left for the rest.
CARD_LIMIT_BYTES = 28_000
#: At most this many options render as buttons; more become a select menu.
MAX_BUTTONS = 5
BUTTON_TEXT_CHARS = 60
PLAIN_TEXT_CHARS = 100
FALLBACK_CHARS = 6000

_ICONS = {
    "missing_info": "❓",
    "ambiguous_requirement": "🤔",
    "approach_choice": "🔀",
    "risk_confirmation": "⚠️",
    "suggestion": "💡",
}

Card = dict[str, Any]

_OPEN_ID = re.compile(r"ou_[A-Za-z0-9]{1,64}")


def card_json(card: Card) -> str:
    """A card as message ``content``: compact JSON (``card_size`` measures it as sent)."""
    return json.dumps(card, ensure_ascii=False, separators=(",", ":"))


def card_size(card: Card) -> int:
    """The bytes the card takes in the request body: its compact JSON as a JSON string, UTF-8.

    Every quote and backslash of the card is escaped once more in the body (lark-oapi
    keeps non-ASCII as is), which adds several KB to a card full of options.
    """
    return len(json.dumps(card_json(card), ensure_ascii=False).encode("utf-8"))


def plain(text: str, limit: int = PLAIN_TEXT_CHARS) -> dict[str, str]:
    """A ``plain_text`` object (shown literally, so no escaping is needed), cut to ``limit``."""
    return {"tag": "plain_text", "content": cut(text, limit)}


def markdown(text: str) -> dict[str, str]:
    """A markdown element for untrusted text: tags neutralized."""
    return {"tag": "markdown", "content": escape_markdown(text)}


def make_card(elements: list[dict[str, Any]], summary: str = "") -> Card:
    """A JSON 2.0 card shared by everyone in the chat (``update_multi``)."""
    config: dict[str, Any] = {"update_multi": True}
    if summary:
        config["summary"] = {"content": cut(summary, PLAIN_TEXT_CHARS)}
    return {"schema": "2.0", "config": config, "body": {"elements": elements}}


def callback(token: str, action: str) -> list[dict[str, Any]]:
    """The ``behaviors`` of an interactive component: a callback with a short payload."""
    return [{"type": "callback", "value": {"t": token, "a": action}}]


def button(
    text: str, token: str, action: str, style: str = "default", confirm: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A callback button."""
    element: dict[str, Any] = {
        "tag": "button",
        "text": plain(text, BUTTON_TEXT_CHARS),
        "type": style,
        "behaviors": callback(token, action),
    }
    if confirm:
        element["confirm"] = confirm
    return element


def button_row(buttons: list[dict[str, Any]]) -> dict[str, Any]:
    """Buttons side by side, wrapping on narrow screens."""
    return {
        "tag": "column_set",
        "flex_mode": "flow",
        "horizontal_spacing": "small",
        "columns": [{"tag": "column", "width": "auto", "elements": [b]} for b in buttons],
    }


def question_elements(request: HumanInputRequest) -> list[dict[str, Any]]:
    """The context (when given) and the question, as the fallback orders them."""
    icon = _ICONS.get(request.clarification_type, "❓")
    elements = []
    if request.context:
        elements.append(markdown(request.context))
    elements.append({"tag": "markdown", "content": f"{icon} **{escape_markdown(request.question)}**"})
    return elements


def select_options(options: list[Option]) -> list[dict[str, Any]]:
    """Select menu options valued by position (``o1`` …), labelled in plain text."""
    return [{"text": plain(o.label), "value": option_action(i)} for i, o in enumerate(options, 1)]


def option_controls(request: HumanInputRequest, token: str) -> list[dict[str, Any]]:
    """Buttons (or a select menu when there are many) for the options, plus "Other…"."""
    loc = request.locale
    if request.clarification_type == "risk_confirmation":
        return [button_row(risk_buttons(request, token))]
    other = button(ui_text("other", loc), token, ACTION_OTHER)
    if len(request.options) <= MAX_BUTTONS:
        buttons = [button(o.label, token, option_action(i)) for i, o in enumerate(request.options, 1)]
        return [button_row([*buttons, other])]
    menu = {
        "tag": "select_static",
        "placeholder": plain(ui_text("choose", loc)),
        "options": select_options(request.options),
        "behaviors": callback(token, ACTION_SELECT),
    }
    return [menu, button_row([other])]


def risk_buttons(request: HumanInputRequest, token: str) -> list[dict[str, Any]]:
    """Confirm (``option-1``, behind a confirmation dialog) and the cancelling options (danger)."""
    loc = request.locale
    dialog = {"title": plain(ui_text("confirm_title", loc)), "text": plain(ui_text("confirm_body", loc))}
    if not request.options:  # no options given: a plain Confirm / Cancel answered as text
        return [
            button(ui_text("confirm", loc), token, "yes", "primary", dialog),
            button(ui_text("cancel", loc), token, "no", "danger"),
        ]
    first, *rest = request.options
    return [
        button(first.label, token, option_action(1), "primary", dialog),
        *(button(o.label, token, option_action(i), "danger") for i, o in enumerate(rest, 2)),
    ]


def field_label(f: FormField, locale: Locale) -> dict[str, str]:
    """The bold label above a form component, marked required or optional."""
    mark = ui_text("required" if f.required else "optional", locale)
    return {"tag": "markdown", "content": f"**{escape_markdown(f.label)}** ({mark})"}


def field_component(f: FormField, index: int, locale: Locale) -> dict[str, Any]:
    """The form component for one field, named by position (``f1`` …)."""
    name = field_name(index)
    hint = plain(
        f.placeholder
        or ui_text("your_answer" if f.type in ("text", "textarea", "number") else "choose", locale)
    )
    if f.type == "checkbox":
        return {"tag": "checker", "name": name, "checked": False, "text": plain(f.label)}
    if f.type in ("select", "multi_select"):
        tag = "select_static" if f.type == "select" else "multi_select_static"
        return {
            "tag": tag,
            "name": name,
            "placeholder": hint,
            "required": f.required,
            "options": select_options(f.options),
        }
    if f.type == "date":
        return {"tag": "date_picker", "name": name, "placeholder": hint, "required": f.required}
    component: dict[str, Any] = {"tag": "input", "name": name, "placeholder": hint, "required": f.required}
    if f.type == "textarea":
        component.update(input_type="multiline_text", rows=3)
    return component


def form_container(request: HumanInputRequest, token: str) -> dict[str, Any]:
    """A ``form`` with one component per field and a submit button."""
    loc = request.locale
    elements: list[dict[str, Any]] = []
    for index, f in enumerate(request.fields, 1):
        if f.type != "checkbox":  # a checker carries its own label
            elements.append(field_label(f, loc))
        elements.append(field_component(f, index, loc))
    submit = button(ui_text("submit", loc), token, ACTION_FORM, "primary")
    submit.update(name="submit_answer", form_action_type="submit")
    elements.append(submit)
    return {"tag": "form", "name": "answer", "elements": elements}


def other_form(request: HumanInputRequest, token: str) -> dict[str, Any]:
    """The "Other…" answer: one text input and a submit button, in a form."""
    loc = request.locale
    submit = button(ui_text("submit", loc), token, ACTION_OTHER_TEXT, "primary")
    submit.update(name="submit_other", form_action_type="submit")
    field = {
        "tag": "input",
        "name": OTHER_INPUT,
        "required": True,
        "placeholder": plain(ui_text("your_answer", loc)),
    }
    return {"tag": "form", "name": "other", "elements": [field, submit]}


def native_card(request: HumanInputRequest, token: str, other_open: bool = False) -> Card:
    """The interactive card for ``request``, whatever its size (see ``render_clarification``).

    ``other_open`` adds the "Other…" text box under the options (after a click on
    "Other…"); a free-text question always has it, a form or a risk confirmation never.
    """
    elements = question_elements(request)
    if request.input_mode == "form" and request.fields:
        return make_card([*elements, form_container(request, token)], summary=request.question)
    if request.clarification_type == "risk_confirmation":
        return make_card([*elements, *option_controls(request, token)], summary=request.question)
    if request.options:
        elements.extend(option_controls(request, token))
    else:
        other_open = True  # free text: the box is the answer
        elements.append({"tag": "markdown", "content": ui_text("type_answer", request.locale)})
    if other_open:
        elements.append(other_form(request, token))
    return make_card(elements, summary=request.question)


def fallback_card(fallback_text: str) -> Card:
    """The text rendering in a card without controls: answered by a typed reply."""
    return make_card([markdown(cut(fallback_text, FALLBACK_CHARS))], summary=fallback_text)


def render_clarification(
    request: HumanInputRequest, token: str, fallback_text: str, other_open: bool = False
) -> Card:
    """The card asking ``request``; the text rendering when the native card would be too big."""
    card = native_card(request, token, other_open)
    if card_size(card) <= CARD_LIMIT_BYTES:
        return card
    return fallback_card(fallback_text)


def render_answered(request: HumanInputRequest, answered_line: str, answered_by: str | None = None) -> Card:
    """The question with its controls gone and who answered what.

    Events carry no names, only open_ids: the answerer's open_id in the line becomes
    a mention, which Feishu shows as the person's name.
    """
    line = escape_markdown(cut(answered_line, FALLBACK_CHARS))
    if answered_by and _OPEN_ID.fullmatch(answered_by):
        line = line.replace(answered_by, f"<at id={answered_by}></at>", 1)
    elements = [*question_elements(request), {"tag": "hr"}, {"tag": "markdown", "content": line}]
    card = make_card(elements, summary=request.question)
    if card_size(card) <= CARD_LIMIT_BYTES:
        return card
    return make_card([markdown(cut(request.question, 500)), {"tag": "markdown", "content": cut(line, 2000)}])


def render_reply(text: str) -> list[Card]:
    """Agent Markdown as one or more cards (long replies split), tags neutralized."""
    return [make_card([markdown(chunk)], summary=chunk) for chunk in split_reply(text)]


def render_notice(text: str) -> Card:
    """A one-line card: progress, errors."""
    return make_card([markdown(text)], summary=text)
