"""Clarifications as Telegram messages: HTML text plus an inline keyboard or ForceReply.

Pure functions from protocol objects to Bot API payload pieces; no I/O. Every
message fits Telegram's limits: 4096 characters, callback data of 64 bytes,
at most 100 buttons and 8 per row.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from telegram import ForceReply, InlineKeyboardButton, InlineKeyboardMarkup
from telegram.helpers import mention_html

from clarigate.adapters import labels
from clarigate.agent.protocol import (
    FormField,
    HumanInputRequest,
    catalog,
    number_text,
    shown_as_text,
    ui_text,
)
from clarigate.agent.protocol.catalog import bracketed, joined, labelled
from clarigate.agent.protocol.graphemes import shorten
from clarigate.agent.protocol.risk import APPROVAL_SOURCE, option_roles
from clarigate.gateway.boundary.messages import Sender
from clarigate.gateway.boundary.outbound_items import ClarificationOut

from . import callback_data as cb
from . import wizard
from .markup import MAX_MESSAGE_CHARS, neutralize_mentions
from .wizard import WizardState

MAX_BUTTONS = 100
MAX_PER_ROW = 8

Markup = InlineKeyboardMarkup | ForceReply | None


@dataclass(frozen=True)
class TelegramMessage:
    """A message ready for ``sendMessage`` / ``editMessageText`` (HTML parse mode)."""

    text: str
    reply_markup: Markup = None


def escape(text: str) -> str:
    """Untrusted text (labels, questions) as inert HTML: escaped, mentions neutralized."""
    return html.escape(neutralize_mentions(text), quote=False)


def question_html(request: HumanInputRequest) -> str:
    """The icon, the context (when given) and the question in bold."""
    icon = catalog.icon(request.clarification_type)
    parts = [f"{icon} {escape(request.context)}"] if request.context else []
    question = f"<b>{escape(request.question)}</b>"
    parts.append(question if request.context else f"{icon} {question}")
    return "\n\n".join(parts)


def render_clarification(out: ClarificationOut) -> TelegramMessage:
    """The native rendering of a request; its text fallback when no native one fits."""
    request = out.request
    try:
        message = render_question(request, out.token)
    except ValueError:  # a token too long for callback data: text still works everywhere
        return TelegramMessage(_fit(escape(shown_as_text(request, out.fallback_text))))
    return message


def render_question(request: HumanInputRequest, token: str) -> TelegramMessage:
    """The question as first shown (also what a closed wizard turns back into).

    Choices, risk confirmations and forms carry "✖ Cancel" ("✖ Skip" beside an option called
    Cancel), which dismisses the question (``_decline_row``); a free-text question's reply box
    leaves no room for buttons (``/cancel`` works there, as everywhere).
    """
    text = question_html(request)
    locale = request.locale
    if request.input_mode == "form":
        hint = escape(joined((f.label for f in request.fields), locale))
        button = _button(f"📝 {ui_text('fill_in', locale)}", token, cb.FORM)
        keyboard = InlineKeyboardMarkup([[button, *_decline_row(request, token)]])
        return TelegramMessage(_fit(f"{text}\n\n<i>{hint}</i>"), keyboard)
    if request.clarification_type == "risk_confirmation":
        return TelegramMessage(_fit(text), _risk_keyboard(request, token))
    if request.input_mode == "choice_with_other" and request.options:
        buttons = [
            _button(_button_label(o.label), token, f"{cb.OPTION_PREFIX}{i}")
            for i, o in enumerate(request.options, start=1)
        ]
        other = _button(ui_text("other", locale), token, cb.OTHER)
        way_out = [other, *_decline_row(request, token)]
        rows = _rows(buttons[: MAX_BUTTONS - len(way_out)], [o.label for o in request.options])
        return TelegramMessage(_fit(text), InlineKeyboardMarkup([*rows, way_out]))
    hint = escape(ui_text("type_answer", locale))
    return TelegramMessage(_fit(f"{text}\n\n<i>{hint}</i>"), _force_reply(request))


def _risk_keyboard(request: HumanInputRequest, token: str) -> InlineKeyboardMarkup:
    """The options; a go-ahead one (``risk.option_roles``: from the request, not the position) is
    marked ⚠️ and its tap asks again (``render_confirm``); the safe choice and Edit are plain.

    The safe choice is an answer the agent reads; "✖ Cancel" (``_decline_row``) dismisses the
    question, as on every other question and on Slack and Feishu, in a row of its own within
    Telegram's 100 buttons. Without options, Confirm / Cancel are the keyboard (no second Cancel).
    """
    locale = request.locale
    if not request.options:
        confirm = _button(f"⚠️ {ui_text('confirm', locale)}", token, cb.CONFIRM)
        return InlineKeyboardMarkup([[confirm, _button(ui_text("cancel", locale), token, cb.CANCEL)]])
    roles = option_roles(request)
    buttons = [
        _button(
            ("⚠️ " if roles.get(o.id) == "go_ahead" else "") + _button_label(o.label),
            token,
            f"{cb.OPTION_PREFIX}{i}",
        )
        for i, o in enumerate(request.options, start=1)
    ]
    way_out = _decline_row(request, token)
    rows = _rows(buttons[: MAX_BUTTONS - len(way_out)], [o.label for o in request.options])
    return InlineKeyboardMarkup([*rows, way_out])


def confirm_label(request: HumanInputRequest, index: int) -> str:
    """ "⚠️ Yes: Delete everything": the button that answers with the go-ahead option at 1-based
    ``index`` (0: the Confirm of a risk confirmation without options)."""
    option = request.options[index - 1].label if index else ui_text("confirm", request.locale)
    return "⚠️ " + ui_text("confirm_yes", request.locale, option=_button_label(option))


def render_confirm(request: HumanInputRequest, token: str, index: int, picker: str) -> TelegramMessage:
    """The question after ``picker``'s tap on a go-ahead option: only their "⚠️ Yes: …" answers;
    "◀ Go back" brings the question's own keyboard back (Telegram has no confirm dialog of its own)."""
    option = request.options[index - 1].label if index else ui_text("confirm", request.locale)
    line = escape(ui_text("confirm_option", request.locale, option=_short(option.strip())))
    code = f"{cb.CONFIRM_PREFIX}{index}"
    yes = InlineKeyboardButton(confirm_label(request, index), callback_data=cb.encode(token, code, picker))
    back = _button(f"◀ {ui_text('confirm_deny', request.locale)}", token, cb.RESTORE)
    ask = f"\n\n⚠️ {line}"
    head = _fit(question_html(request), MAX_MESSAGE_CHARS - len(ask))  # the ask is never cut away
    return TelegramMessage(head + ask, InlineKeyboardMarkup([[yes], [back]]))


def render_answered(request: HumanInputRequest, answered_line: str) -> TelegramMessage:
    """The request's message once answered: the question and "✅ Answered by …", no keyboard."""
    # A form's answer line lists every value: keep it short enough that it is never cut away,
    # and the question shorter still when both would not fit (the answer is the news).
    line = _escaped_within(answered_line, 2000)
    head = question_html(request)
    if len(head) + 2 + len(line) > MAX_MESSAGE_CHARS:
        head = f"<b>{_escaped_within(request.question, MAX_MESSAGE_CHARS - len(line) - 12)}</b>"
    return TelegramMessage(_fit(f"{head}\n\n{line}"))


def _escaped_within(text: str, limit: int) -> str:
    """``text`` escaped, cut (with "…") so that the escaped form has at most ``limit`` characters."""
    keep = min(len(text), limit)
    while len(escaped := escape(_short(text, keep))) > limit:
        keep = max(1, int(keep * 0.8))
    return escaped


def render_other_prompt(request: HumanInputRequest, who: Sender) -> TelegramMessage:
    """The prompt after "Other…": a ForceReply so the person's next message is the answer.

    The person is mentioned by id: in a group a selective ForceReply opens the reply
    box only for the people the message mentions.
    """
    name = mention_html(int(who.user_id), who.label) if who.user_id.isdigit() else escape(who.label)
    return TelegramMessage(f"{name}: {escape(ui_text('type_answer', request.locale))}", _force_reply(request))


def _force_reply(request: HumanInputRequest) -> ForceReply:
    """Opens the reply box (for the person who was asked, in groups) with a placeholder."""
    return ForceReply(selective=True, input_field_placeholder=ui_text("your_answer", request.locale))


def render_wizard(request: HumanInputRequest, state: WizardState) -> TelegramMessage:
    """The form message at the wizard's current step, or its summary."""
    current = state.field(request)
    if current is None:
        return _summary(request, state)
    locale = request.locale
    need = ui_text("field_required" if current.required else "field_optional", locale)
    heading = f"<b>{state.step + 1}/{len(request.fields)} · {escape(current.label)}</b>{escape(need)}"
    lines = [question_html(request), "", heading]
    # the hint, whether or not the step shows a value (an approval Edit's only repeats the argument)
    if current.placeholder and request.source != APPROVAL_SOURCE:
        lines.append(f"<i>{escape(_short(current.placeholder))}</i>")
    if current.name in state.values:
        lines.append(f"→ {escape(_short(_shown_value(current, state.values[current.name], locale)))}")
    if state.notice:
        again = bracketed(f"×{state.tries}", locale) if state.tries > 1 else ""
        lines.append(f"⚠️ {escape(state.notice)}{again}")
    if current.type in ("text", "textarea", "number", "date"):
        hint = ui_text("type_answer", locale) + (
            bracketed("YYYY-MM-DD", locale) if current.type == "date" else ""
        )
        lines.append(f"<i>{escape(hint)}</i>")
    nav = [_step_button(f"◀ {ui_text('back', locale)}", state, cb.STEP_BACK)] if state.step > 0 else []
    nav += _go_on_buttons(request, current, state)
    way_out = _decline_row(request, state.token)
    # the options' buttons leave room for the others (Done, the nav row, Cancel): the rest are typed
    room = MAX_BUTTONS - len(nav) - len(way_out) - (current.type == "multi_select")
    if current.type in ("select", "multi_select") and len(current.options) > room:
        more = ui_text("wizard_more_options", locale, shown=room, total=len(current.options))
        lines.append(f"<i>{escape(more)}</i>")
    rows = _step_buttons(current, state, locale, room)
    return TelegramMessage(
        _fit("\n".join(lines)), InlineKeyboardMarkup([*rows, *([nav] if nav else []), way_out])
    )


def _go_on_buttons(
    request: HumanInputRequest, current: FormField, state: WizardState
) -> list[InlineKeyboardButton]:
    """Keep (the field's current value), Next (what is there now), Skip, Clear."""
    locale, has_value = request.locale, current.name in state.values
    buttons = []
    if current.default is not None:
        # the field shows its default: kept, another value typed or chosen, or (a form's) emptied
        buttons.append(_step_button(f"{ui_text('keep', locale)} ▶", state, cb.STEP_KEEP))
        value = state.values.get(current.name)
        if has_value and wizard.is_blank(value):  # emptied: go on so
            buttons.append(_step_button(f"{ui_text('skip', locale)} ▶", state, cb.STEP_SKIP))
        elif has_value and value != current.default:
            buttons.append(_step_button(f"{ui_text('next', locale)} ▶", state, cb.STEP_SKIP))
    elif has_value:  # keep what is there (after Back, or Edit from the summary) and go on
        buttons.append(_step_button(f"{ui_text('next', locale)} ▶", state, cb.STEP_SKIP))
    elif not current.required:
        buttons.append(_step_button(f"{ui_text('skip', locale)} ▶", state, cb.STEP_SKIP))
    if has_value and not wizard.is_blank(state.values[current.name]) and wizard.may_clear(request, current):
        buttons.append(_step_button(f"⌫ {ui_text('clear', locale)}", state, cb.STEP_CLEAR))
    return buttons


def _step_buttons(
    current: FormField, state: WizardState, locale: Any, room: int = MAX_BUTTONS
) -> list[list[InlineKeyboardButton]]:
    """The step's own buttons: at most ``room`` options' (the others are typed), Done, Yes / No."""
    labels = [o.label for o in current.options]
    if current.type == "select":
        picked = state.values.get(current.name)
        buttons = [
            _step_button(
                ("✓ " if o.value == picked else "") + _button_label(o.label), state, f"{cb.STEP_SELECT}{i}"
            )
            for i, o in enumerate(current.options, start=1)
        ]
        return _rows(buttons[:room], labels)
    if current.type == "multi_select":
        chosen = state.values.get(current.name) or []
        buttons = [
            _step_button(
                ("✓ " if o.value in chosen else "") + _button_label(o.label), state, f"{cb.STEP_TOGGLE}{i}"
            )
            for i, o in enumerate(current.options, start=1)
        ]
        finish = _step_button(f"{ui_text('done', locale)} ✔", state, cb.STEP_DONE)
        return _rows(buttons[:room], labels) + [[finish]]
    if current.type == "checkbox":
        ticked = state.values.get(current.name)  # the current answer is marked ✓
        return [
            [
                _step_button(("✓ " if ticked is True else "") + ui_text("yes", locale), state, cb.STEP_YES),
                _step_button(("✓ " if ticked is False else "") + ui_text("no", locale), state, cb.STEP_NO),
            ]
        ]
    return []


def _summary(request: HumanInputRequest, state: WizardState) -> TelegramMessage:
    locale = request.locale
    head = [question_html(request), "", escape(ui_text("summary", locale))]
    tail = [f"⚠️ {escape(state.notice)}"] if state.notice else []
    room = (MAX_MESSAGE_CHARS - len("\n".join([*head, *tail])) - 2) // max(len(request.fields), 1) - 1
    fields = [_summary_line(request, form_field, state, room) for form_field in request.fields]
    lines = [*head, *fields, *tail]
    rows = [
        [
            _step_button(f"✅ {ui_text('submit', locale)}", state, cb.SUMMARY_SUBMIT),
            _step_button(f"✏️ {ui_text('edit', locale)}", state, cb.SUMMARY_EDIT),
        ],
        [
            _step_button(f"◀ {ui_text('back', locale)}", state, cb.STEP_BACK),
            *_decline_row(request, state.token),
        ],
    ]
    return TelegramMessage(_fit("\n".join(lines)), InlineKeyboardMarkup(rows))


def _summary_line(request: HumanInputRequest, form_field: FormField, state: WizardState, room: int) -> str:
    """ "• Label: value" in at most ``room`` characters (escaped), the label cut to half of it at most
    when both do not fit, the value to the rest: every field shows on the summary the person submits."""
    locale = request.locale
    value = state.values.get(form_field.name)
    shown = "—" if form_field.name not in state.values else _shown_value(form_field, value, locale)
    line = f"• {escape(labelled(form_field.label, _short(shown), locale))}"
    if len(line) <= room:
        return line
    budget = room - len(labelled("• ", "", locale))
    label = _escaped_within(form_field.label, max(budget // 2, 8))  # a short one leaves the value more
    return f"• {labelled(label, _escaped_within(shown, max(budget - len(label), 8)), locale)}"


def format_value(form_field: FormField, value: Any, locale: Any = "en") -> str:
    """A raw wizard value as a person reads it (labels for options, Yes/No for checkboxes)."""
    labels = {o.value: o.label for o in form_field.options}
    if isinstance(value, bool):
        return ui_text("yes" if value else "no", locale)
    if isinstance(value, int | float):
        return number_text(value) or str(value)
    if isinstance(value, list):
        return joined((labels.get(str(v), str(v)) for v in value), locale) or "—"
    return labels.get(str(value), str(value))


def _shown_value(form_field: FormField, value: Any, locale: Any) -> str:
    """A wizard value as its step and the summary show it: "—" when emptied."""
    return "—" if wizard.is_blank(value) else format_value(form_field, value, locale)


def _decline_row(request: HumanInputRequest, token: str) -> list[InlineKeyboardButton]:
    """ "✖ Cancel" ("✖ Skip" when an option is called Cancel: ``labels.decline_label``)."""
    return [_button(f"✖ {labels.decline_label(request)}", token, cb.DECLINE)]


def _button(text: str, token: str, action: str) -> InlineKeyboardButton:
    """A button whose payload is the short ``token|action`` code."""
    return InlineKeyboardButton(text, callback_data=cb.encode(token, action))


def _step_button(text: str, state: WizardState, action: str) -> InlineKeyboardButton:
    """A button of the form as ``state`` shows it: its tap counts only for that person, on that
    step as this drawing shows it (``forms.Forms.step``: one message shows whoever's form was drawn
    last, and a step drawn again after Back, Edit or a form opened anew is another drawing)."""
    data = cb.encode(state.token, action, state.user_id, state.step, state.drawing)
    return InlineKeyboardButton(text, callback_data=data)


def _short(text: str, limit: int = 200) -> str:
    """``text`` in at most ``limit`` characters, "…" ending it when cut (never inside a character
    as shown: ``graphemes``)."""
    return shorten(text, limit)


def _button_label(label: str) -> str:
    """Button text kept short enough to read on a phone (the full label is in the request)."""
    return _short(label, 60)


def _rows(buttons: list[InlineKeyboardButton], labels: list[str]) -> list[list[InlineKeyboardButton]]:
    """Buttons in rows: short labels share a row (at most 8 per row), long ones stand alone."""
    widest = max((len(label) for label in labels), default=0)
    per_row = 1 if widest > 24 else 2 if widest > 12 else 4 if widest > 5 else MAX_PER_ROW
    buttons = buttons[:MAX_BUTTONS]
    return [buttons[i : i + per_row] for i in range(0, len(buttons), per_row)]


def _fit(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """Text within one message, cut at a line end (every line's tags are closed on that line)."""
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit - 2)
    return text[:cut] + "\n…"


def feedback_keyboard(token: str) -> InlineKeyboardMarkup:
    """👍 / 👎 under a final answer (``FeedbackAsk``): one row, each tap carrying the answer's token."""
    return InlineKeyboardMarkup(
        [
            [
                InlineKeyboardButton("👍", callback_data=cb.encode(token, cb.VOTE_UP)),
                InlineKeyboardButton("👎", callback_data=cb.encode(token, cb.VOTE_DOWN)),
            ]
        ]
    )
