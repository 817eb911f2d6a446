"""Pure renderers: clarification requests and agent replies -> Feishu card JSON 2.0.

No I/O here. Interactive parts carry a callback value ``{"t": token, "a": action, "l": locale}``
(see ``actions.py``), never option text; form components are named ``f1`` … and
select options valued ``o1`` …, so nothing the model wrote ends up in a name or a
payload. Model text goes through ``escape_markdown`` (markdown) or ``plain``
(plain_text, which Feishu shows literally). Every question card has a Cancel that
dismisses it. The parts cards are built of are in ``card_parts``, a question's form in
``form_card``.

Feishu refuses a card over 30 KB or with more than 200 elements and components (a
JSON 2.0 card; every ``plain_text`` counts: option texts, placeholders, button texts).
A question whose card would break either limit is sent as its text rendering, answered
by a typed reply, before Feishu can refuse it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from clarigate.adapters.labels import decline_label, shown_labels
from clarigate.agent.protocol import HumanInputRequest, catalog, ui_text
from clarigate.agent.protocol.fallback import shown_as_text
from clarigate.agent.protocol.risk import option_roles

from .actions import ACTION_DECLINE, ACTION_OTHER, ACTION_SELECT, option_action
from .card_parts import (
    BUTTON_TEXT_CHARS,
    PLAIN_TEXT_CHARS,
    Card,
    button,
    button_row,
    callback,
    confirm_dialog,
    make_card,
    markdown,
    option_list,
    plain,
    select_options,
)
from .form_card import form_container, other_form
from .markup import clip, cut, escape_markdown, inline_markdown, split_reply

#: Feishu rejects a card message whose request body is above 30 KB; the card travels
#: in it as a JSON string, so that is what is measured, with room left for the rest.
CARD_LIMIT_BYTES = 28_000
#: Feishu: "单个卡片最多支持 200 个元素（如 tag 为 plain_text 的元素）或组件".
MAX_ELEMENTS = 200
#: At most this many options render as buttons; more become a select menu.
MAX_BUTTONS = 5
FALLBACK_CHARS = 6000

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


def question_elements(request: HumanInputRequest) -> list[dict[str, Any]]:
    """The context (when given) and the question, as the fallback orders them."""
    icon = catalog.icon(request.clarification_type)
    elements = []
    if request.context:
        elements.append(markdown(request.context))
    elements.append({"tag": "markdown", "content": f"{icon} **{inline_markdown(request.question)}**"})
    return elements


def button_texts(request: HumanInputRequest) -> list[str]:
    """The options' texts on buttons: numbered, what tells them apart kept, when some are cut."""
    return shown_labels([o.label for o in request.options], BUTTON_TEXT_CHARS)


def cancel_buttons(request: HumanInputRequest, token: str) -> list[dict[str, Any]]:
    """Cancel ("Skip" beside an option called Cancel): dismisses the question (the agent is told the
    person declined)."""
    return [button(decline_label(request), token, ACTION_DECLINE, locale=request.locale)]


def option_controls(request: HumanInputRequest, token: str) -> list[dict[str, Any]]:
    """Buttons (or a select menu when there are many) for the options, plus "Other…" and Cancel."""
    loc = request.locale
    if request.clarification_type == "risk_confirmation":
        return [*option_list(request.options, BUTTON_TEXT_CHARS), button_row(risk_buttons(request, token))]
    other = button(ui_text("other", loc), token, ACTION_OTHER, locale=loc)
    cancel = cancel_buttons(request, token)
    if len(request.options) <= MAX_BUTTONS:
        texts = button_texts(request)
        buttons = [button(text, token, option_action(i), locale=loc) for i, text in enumerate(texts, 1)]
        return [*option_list(request.options, BUTTON_TEXT_CHARS), button_row([*buttons, other, *cancel])]
    menu = {
        "tag": "select_static",
        "placeholder": plain(ui_text("choose", loc)),
        "options": select_options(request.options),
        "behaviors": callback(token, ACTION_SELECT, loc),
    }
    return [*option_list(request.options, PLAIN_TEXT_CHARS), menu, button_row([other, *cancel])]


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
    open_id) where Feishu will not show a card only they see (``ephemeral``: a topic group, a
    refusal): it mentions that person alone (the text's own tags stay neutralized, so it mentions
    no one else)."""
    element = markdown(text)
    if to and _OPEN_ID.fullmatch(to):
        element["content"] = f"<at id={to}></at> {inline_markdown(text)}"
    return make_card([element], summary=text)
