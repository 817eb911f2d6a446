"""Pure renderers: clarification requests and agent replies -> Feishu card JSON 2.0.

No I/O here. Interactive parts carry a callback value ``{"t": token, "a": action, "l": locale}``
(see ``actions.py``), never option text; form components are named ``f1`` … and
select options valued ``o1`` …, so nothing the model wrote ends up in a name or a
payload. Model text goes through ``escape_markdown`` (markdown) or ``plain``
(plain_text, which Feishu shows literally). Every question card has a Cancel that
dismisses it.

Feishu refuses a card over 30 KB or with more than 200 elements and components (a
JSON 2.0 card; every ``plain_text`` counts: option texts, placeholders, button texts).
A question whose card would break either limit is sent as its text rendering, answered
by a typed reply, before Feishu can refuse it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from clarigate.adapters.labels import decline_label, labels_are_cut, shown_labels
from clarigate.agent.protocol import FormField, HumanInputRequest, Option, catalog, ui_text
from clarigate.agent.protocol.fallback import shown_as_text
from clarigate.agent.protocol.models import Locale
from clarigate.agent.protocol.risk import is_risk_form, option_roles

from .actions import (
    ACTION_CHECK,
    ACTION_DECLINE,
    ACTION_FORM,
    ACTION_OTHER,
    ACTION_OTHER_TEXT,
    ACTION_SELECT,
    OTHER_INPUT,
    field_name,
    input_default,
    option_action,
)
from .markup import clip, cut, escape_markdown, inline_markdown, preview, split_reply

#: Feishu rejects a card message whose request body is above 30 KB; the card travels
#: in it as a JSON string, so that is what is measured, with room left for the rest.
CARD_LIMIT_BYTES = 28_000
#: Feishu: "单个卡片最多支持 200 个元素（如 tag 为 plain_text 的元素）或组件".
MAX_ELEMENTS = 200
#: At most this many options render as buttons; more become a select menu.
MAX_BUTTONS = 5
BUTTON_TEXT_CHARS = 60
PLAIN_TEXT_CHARS = 100
FALLBACK_CHARS = 6000

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


def element_count(card: Card) -> int:
    """The elements and components of ``card`` as Feishu counts them: every object with a ``tag``."""

    def count(node: Any) -> int:
        if isinstance(node, dict):
            return ("tag" in node) + sum(count(v) for v in node.values())
        if isinstance(node, list):
            return sum(count(v) for v in node)
        return 0

    return count(card.get("body", {}))


def fits(card: Card) -> bool:
    """True when Feishu accepts ``card``: at most 30 KB (with room) and 200 elements."""
    return card_size(card) <= CARD_LIMIT_BYTES and element_count(card) <= MAX_ELEMENTS


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
        config["summary"] = {"content": cut(preview(summary), PLAIN_TEXT_CHARS)}
    return {"schema": "2.0", "config": config, "body": {"elements": elements}}


def callback(token: str, action: str, locale: Locale = "en") -> list[dict[str, Any]]:
    """The ``behaviors`` of an interactive component: a callback with a short payload.

    The locale travels along so that a click on a card nobody knows any more (expired,
    or from another deployment) is still answered in the card's language.
    """
    return [{"type": "callback", "value": {"t": token, "a": action, "l": locale}}]


def button(
    text: str,
    token: str,
    action: str,
    style: str = "default",
    confirm: dict[str, Any] | None = None,
    locale: Locale = "en",
) -> dict[str, Any]:
    """A callback button."""
    element: dict[str, Any] = {
        "tag": "button",
        "text": plain(text, BUTTON_TEXT_CHARS),
        "type": style,
        "behaviors": callback(token, action, locale),
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
    icon = catalog.icon(request.clarification_type)
    elements = []
    if request.context:
        elements.append(markdown(request.context))
    elements.append({"tag": "markdown", "content": f"{icon} **{inline_markdown(request.question)}**"})
    return elements


def select_options(options: list[Option]) -> list[dict[str, Any]]:
    """Select menu options valued by position (``o1`` …), labelled in plain text (numbered,
    what tells them apart kept, when some are cut: ``clarigate.adapters.labels``)."""
    texts = shown_labels([o.label for o in options], PLAIN_TEXT_CHARS)
    return [{"text": plain(text), "value": option_action(i)} for i, text in enumerate(texts, 1)]


def button_texts(request: HumanInputRequest) -> list[str]:
    """The options' texts on buttons: numbered, what tells them apart kept, when some are cut."""
    return shown_labels([o.label for o in request.options], BUTTON_TEXT_CHARS)


def option_list(request: HumanInputRequest, limit: int) -> list[dict[str, Any]]:
    """The options in full, numbered, when their buttons or entries show them cut (else nothing)."""
    if not labels_are_cut([o.label for o in request.options], limit):
        return []
    lines = [f"{n}. {o.label.strip()}" for n, o in enumerate(request.options, 1)]
    return [markdown("\n".join(lines))]


def cancel_buttons(request: HumanInputRequest, token: str) -> list[dict[str, Any]]:
    """Cancel ("Skip" beside an option called Cancel): dismisses the question (the agent is told the
    person declined)."""
    return [button(decline_label(request), token, ACTION_DECLINE, locale=request.locale)]


def option_controls(request: HumanInputRequest, token: str) -> list[dict[str, Any]]:
    """Buttons (or a select menu when there are many) for the options, plus "Other…" and Cancel."""
    loc = request.locale
    if request.clarification_type == "risk_confirmation":
        return [*option_list(request, BUTTON_TEXT_CHARS), button_row(risk_buttons(request, token))]
    other = button(ui_text("other", loc), token, ACTION_OTHER, locale=loc)
    cancel = cancel_buttons(request, token)
    if len(request.options) <= MAX_BUTTONS:
        texts = button_texts(request)
        buttons = [button(text, token, option_action(i), locale=loc) for i, text in enumerate(texts, 1)]
        return [*option_list(request, BUTTON_TEXT_CHARS), button_row([*buttons, other, *cancel])]
    menu = {
        "tag": "select_static",
        "placeholder": plain(ui_text("choose", loc)),
        "options": select_options(request.options),
        "behaviors": callback(token, ACTION_SELECT, loc),
    }
    return [*option_list(request, PLAIN_TEXT_CHARS), menu, button_row([other, *cancel])]


def confirm_dialog(locale: Locale, option: str | None = None) -> dict[str, Any]:
    """The "Are you sure?" before a go-ahead button's click (or a risk form's Submit) counts."""
    text = ui_text("confirm_option" if option else "confirm_body", locale, option=(option or "").strip())
    return {"title": plain(ui_text("confirm_title", locale)), "text": plain(text, PLAIN_TEXT_CHARS * 3)}


def risk_buttons(request: HumanInputRequest, token: str) -> list[dict[str, Any]]:
    """A risk confirmation's options, then Cancel: each go-ahead option is red and asks first
    (``risk.option_roles``, from the request, not the position); the safe choice, an approval's
    Edit and Cancel are default buttons."""
    loc = request.locale
    if not request.options:  # no options given: Confirm goes ahead, Cancel dismisses
        confirm = ui_text("confirm", loc)
        dialog = confirm_dialog(loc, confirm)
        return [button(confirm, token, "yes", "danger", dialog, loc), *cancel_buttons(request, token)]
    roles = option_roles(request)
    buttons = []
    for index, (option, text) in enumerate(zip(request.options, button_texts(request), strict=True), 1):
        if roles.get(option.id) == "go_ahead":
            dialog = confirm_dialog(loc, option.label)
            buttons.append(button(text, token, option_action(index), "danger", dialog, loc))
        else:
            buttons.append(button(text, token, option_action(index), locale=loc))
    return [*buttons, *cancel_buttons(request, token)]


def field_label(f: FormField, locale: Locale) -> dict[str, str]:
    """The bold label above a form component, marked required or optional."""
    mark = ui_text("required" if f.required else "optional", locale)
    return {"tag": "markdown", "content": f"**{inline_markdown(f.label)}** ({mark})"}


def field_component(f: FormField, index: int, token: str, locale: Locale) -> dict[str, Any]:
    """The form component for one field, named by position (``f1`` …), filled in with the
    field's default (``default_value``, ``initial_option``, ``selected_values``, ``checked``,
    ``initial_date``) so a submit that changes nothing gives the default back."""
    name = field_name(index)
    hint = plain(
        f.placeholder
        or ui_text("your_answer" if f.type in ("text", "textarea", "number") else "choose", locale)
    )
    if f.type == "checkbox":
        # A checker carries its own label, with the required mark the other fields show above
        # them. Feishu documents a checker without ``behaviors`` as ticked "locally only": give
        # it a callback (answered with nothing) so its state is the one the submit reports.
        label = f"{f.label} ({ui_text('required', locale)})" if f.required else f.label
        return {
            "tag": "checker",
            "name": name,
            "checked": f.default is True,
            "text": plain(label, PLAIN_TEXT_CHARS + 20),
            "behaviors": callback(token, ACTION_CHECK, locale),
        }
    if f.type in ("select", "multi_select"):
        return _choice_component(f, name, hint)
    if f.type == "date":
        component = {"tag": "date_picker", "name": name, "placeholder": hint, "required": f.required}
        if isinstance(f.default, str):
            component["initial_date"] = f.default
        return component
    component = {"tag": "input", "name": name, "placeholder": hint, "required": f.required}
    if f.type == "textarea":
        component.update(input_type="multiline_text", rows=3)
    shown = input_default(f)
    if shown is not None:
        component["default_value"] = shown
    return component


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


def form_container(request: HumanInputRequest, token: str) -> dict[str, Any]:
    """A ``form`` with one component per field and a submit button."""
    loc = request.locale
    elements: list[dict[str, Any]] = []
    for index, f in enumerate(request.fields, 1):  # a hint shows under a checker or a shown value
        hint = (f.placeholder or "").strip() if f.type == "checkbox" or f.default is not None else ""
        notes = [markdown(hint) | {"text_size": "notation"}] if hint else []
        labels = [] if f.type == "checkbox" else [field_label(f, loc)]  # a checker carries its own label
        elements.extend([*labels, field_component(f, index, token, loc), *notes])
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


def native_card(request: HumanInputRequest, token: str, other_open: bool = False) -> Card:
    """The interactive card for ``request``, whatever its size (see ``render_clarification``).

    ``other_open`` adds the "Other…" text box under the options (after a click on
    "Other…"); a free-text question always has it, a form or a risk confirmation never.
    A form and a free-text question get their Cancel under the form (a button inside a
    form would have to be named and belong to it).
    """
    elements = question_elements(request)
    if request.input_mode == "form" and request.fields:
        form = form_container(request, token)
        return make_card([*elements, form, *cancel_row(request, token)], summary=request.question)
    if request.clarification_type == "risk_confirmation":
        return make_card([*elements, *option_controls(request, token)], summary=request.question)
    if not request.options:  # free text: the box is the answer
        elements.append({"tag": "markdown", "content": ui_text("type_answer", request.locale)})
        elements.extend([other_form(request, token), *cancel_row(request, token)])
        return make_card(elements, summary=request.question)
    elements.extend(option_controls(request, token))
    if other_open:
        elements.append(other_form(request, token))
    return make_card(elements, summary=request.question)


def cancel_row(request: HumanInputRequest, token: str) -> list[dict[str, Any]]:
    """Cancel on a row of its own."""
    return [button_row(cancel)] if (cancel := cancel_buttons(request, token)) else []


def fallback_card(fallback_text: str, request: HumanInputRequest | None = None, token: str = "") -> Card:
    """The text rendering in a card, answered by a typed reply; Cancel under it when it asks ``request``."""
    elements = [markdown(cut(fallback_text, FALLBACK_CHARS))]
    if request is not None and token:
        elements.extend(cancel_row(request, token))
    return make_card(elements, summary=fallback_text)


def render_clarification(
    request: HumanInputRequest, token: str, fallback_text: str, other_open: bool = False
) -> Card:
    """The card asking ``request``; the text rendering when Feishu would refuse the native card."""
    card = native_card(request, token, other_open)
    if fits(card):
        return card
    return fallback_card(shown_as_text(request, fallback_text), request, token)


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
    return make_card([markdown(cut(request.question, 500)), {"tag": "markdown", "content": clip(line, 2000)}])


def render_reply(text: str) -> list[Card]:
    """Agent Markdown as one or more cards (long replies split), tags neutralized."""
    return [reply_card(chunk) for chunk in split_reply(text)]


def reply_card(chunk: str) -> Card:
    """One part of a reply (at most ``REPLY_CHUNK_CHARS``) as a card, tags neutralized."""
    return make_card([markdown(chunk)], summary=chunk)


def render_notice(text: str, to: str | None = None) -> Card:
    """A one-line card: progress, errors. ``to``: a notice for that one member of a group (an
    open_id): Feishu has no message only one member sees, so it mentions that person alone (the
    text's own tags stay neutralized, so it mentions no one else)."""
    element = markdown(text)
    if to and _OPEN_ID.fullmatch(to):
        element["content"] = f"<at id={to}></at> {inline_markdown(text)}"
    return make_card([element], summary=text)
