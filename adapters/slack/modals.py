"""Modals for a clarification: the form and the "Other…" answer (pure functions, no I/O).

Each form field is one input block whose ``block_id`` is ``field-<n>`` (its position),
so per-field errors can be returned by block id whatever the field's name is, and
select options carry their position, never their (possibly long) text. A field with a
default is shown filled in (``initial_value``, ``initial_option(s)``, ``initial_date``; a
checkbox ticked when true), so submitting it unchanged gives the default back. A typed interrupt's
bounds are the input's own where Slack has them (``modal_bounds``: ``min_value`` / ``max_value``,
``min_length`` / ``max_length``), and a submit outside them is refused under the field
(``out_of_bounds``), the modal kept open. A required yes/no
without one is Yes and No radio buttons, neither picked, which Slack will not submit unanswered.

A risk confirmation's form never pre-picks a decision: a field whose default goes ahead
(``risk.field_goes_ahead``, the rule every platform's confirmation uses: a ticked checkbox, a select's
option that does not read safe), or a checkbox without one whose unticked "no" goes ahead ("Keep
the backups"), is shown with nothing picked, as a required input (a checkbox as Yes / No radio
buttons), its hint naming what the agent proposed, if anything (``hides_default``); Slack keeps
the modal open until the person picks, and a submission without that pick is refused here too
(``undecided``). Slack's modal ``submit`` is plain text only (no ``style``), so the pick is the
deliberate step. Any other form is shown filled in.
"""

from __future__ import annotations

import json
from typing import Any

from slack_sdk.models.blocks import (
    Block,
    CheckboxesElement,
    ContextBlock,
    DatePickerElement,
    InputBlock,
    InputInteractiveElement,
    NumberInputElement,
    Option,
    PlainTextInputElement,
    PlainTextObject,
    RadioButtonsElement,
    StaticMultiSelectElement,
    StaticSelectElement,
)
from slack_sdk.models.views import View

from clarigate.adapters.labels import labels_are_cut, shown_labels
from clarigate.agent.protocol import FormField, HumanInputRequest, check_form_values, ui_text
from clarigate.agent.protocol.bounds import bound_error
from clarigate.agent.protocol.risk import hides_default

from .markup import cut
from .modal_bounds import number_range, number_shown, text_length, whole_input
from .render import LABEL_LIMIT, SELECT_OPTIONS_LIMIT, plain, question_blocks

FORM_CALLBACK = "clarigate:form"
OTHER_CALLBACK = "clarigate:other"
VALUE_ACTION = "value"
OTHER_BLOCK = "answer"
TITLE_LIMIT = 24
PLACEHOLDER_LIMIT = 150
HINT_LIMIT = 2000
MAX_CONTEXT_ELEMENTS = 10
MAX_CHECKBOXES = 10
TEXT_LIMIT = 3000  # a plain_text_input's initial_value (and max_length) at most
_MODAL_BLOCKS = 100


def field_block_id(index: int) -> str:
    """The block id of the form field at 0-based ``index``."""
    return f"field-{index + 1}"


def modal_metadata(token: str, channel: str | None, message_ts: str | None, locale: str = "en") -> str:
    """``private_metadata``: which request the modal answers, which message shows it, and the
    question's language (``l``: an expired question is still said so in it)."""
    return json.dumps({"t": token, "c": channel, "ts": message_ts, "l": locale}, separators=(",", ":"))


def read_metadata(private_metadata: str | None) -> dict[str, Any]:
    """The dict ``modal_metadata`` wrote (empty when missing or not ours)."""
    if not isinstance(private_metadata, str):  # signed, but not what we wrote
        return {}
    try:
        data = json.loads(private_metadata or "{}")
    except (ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _options(field: FormField) -> list[Option]:
    """The field's choices; numbered when Slack must cut some labels (listed in full beside them),
    each cut label keeping what tells it apart (``labels.shown_labels``)."""
    shown = shown_labels([option.label for option in field.options], LABEL_LIMIT)
    return [
        Option(text=plain(text, LABEL_LIMIT), value=str(i))
        for i, text in enumerate(shown[:SELECT_OPTIONS_LIMIT], start=1)
    ]


def _full_list(field: FormField) -> list[str]:
    """The choices in full, one numbered line each, when their texts in the element are cut."""
    if not labels_are_cut([option.label for option in field.options], LABEL_LIMIT):
        return []
    return [f"{i}. {o.label.strip()}" for i, o in enumerate(field.options, 1)]


def _hint_and_below(request: HumanInputRequest, field: FormField) -> tuple[str, list[str]]:
    """The input's hint (what the agent proposed, then the choices in full when all fit its 2,000
    characters) and the choices in full to list under the input when they do not."""
    proposed = _as_shown(request, field)[1]
    lines = _full_list(field)
    hint = "\n".join(t for t in (proposed, *lines) if t)
    if len(hint) <= HINT_LIMIT:
        return hint, []
    return proposed or "", lines


def _full_labels_below(lines: list[str]) -> list[Block]:
    """The choices in full under the input (24 labels of 110 characters): context blocks of whole
    lines, each text under Slack's limit, at most 10 texts a block."""
    chunks: list[str] = []
    for line in lines:
        if chunks and len(chunks[-1]) + 1 + len(line) <= HINT_LIMIT:
            chunks[-1] += "\n" + line
        else:
            chunks.append(line)
    texts = [plain(chunk, HINT_LIMIT) for chunk in chunks]
    return [
        ContextBlock(elements=texts[at : at + MAX_CONTEXT_ELEMENTS])  # type: ignore[arg-type]
        for at in range(0, len(texts), MAX_CONTEXT_ELEMENTS)
    ]


def _picked(field: FormField, options: list[Option]) -> list[Option]:
    """The shown options that the field's default chooses (a value, or a list of values)."""
    chosen = field.default if isinstance(field.default, list) else [field.default]
    values = [o.value for o in field.options[: len(options)]]
    return [options[i] for i, value in enumerate(values) if value in chosen]


def _choice_element(
    field: FormField, locale: str, placeholder: PlainTextObject | None
) -> InputInteractiveElement:
    options = _options(field)
    picked = _picked(field, options) if field.default is not None else []
    hint = placeholder or plain(ui_text("choose", locale), PLACEHOLDER_LIMIT)  # type: ignore[arg-type]
    if field.type == "select":
        return StaticSelectElement(
            action_id=VALUE_ACTION,
            placeholder=hint,  # type: ignore[arg-type]
            options=options,
            initial_option=picked[0] if picked else None,
        )
    if len(field.options) <= MAX_CHECKBOXES:
        return CheckboxesElement(action_id=VALUE_ACTION, options=options, initial_options=picked or None)
    return StaticMultiSelectElement(
        action_id=VALUE_ACTION,
        placeholder=hint,
        options=options,
        initial_options=picked or None,  # type: ignore[arg-type]
    )


def shows_default(field: FormField) -> bool:
    """Whether the field's element shows its default: not a text longer than an input takes
    (that field shows empty, and left empty it keeps its default)."""
    default = field.default
    choice = field.type in ("select", "multi_select") and bool(field.options)
    if choice or field.type in ("number", "date", "checkbox"):
        return default is not None
    return isinstance(default, str) and len(default) <= TEXT_LIMIT


def asks_yes_or_no(field: FormField) -> bool:
    """A required yes/no showing no value: the person picks Yes or No, and Slack keeps the modal
    open until they do (a required input), so that no one's "no" is a box left as it was."""
    return field.type == "checkbox" and field.required and field.default is None


def _yes_no_element(field: FormField, locale: str) -> InputInteractiveElement:
    """A lone "Yes" checkbox, ticked when the field's value is true (left unticked: no), or Yes
    and No radio buttons, neither picked, when the person must choose (``asks_yes_or_no``)."""
    yes = Option(text=plain(ui_text("yes", locale), LABEL_LIMIT), value="true")  # type: ignore[arg-type]
    if asks_yes_or_no(field):
        no = Option(text=plain(ui_text("no", locale), LABEL_LIMIT), value="false")  # type: ignore[arg-type]
        return RadioButtonsElement(action_id=VALUE_ACTION, options=[yes, no])
    return CheckboxesElement(
        action_id=VALUE_ACTION, options=[yes], initial_options=[yes] if field.default is True else None
    )


def _element(field: FormField, locale: str) -> InputInteractiveElement:
    """One field's element, filled in with its default (Block Kit's ``initial_*``)."""
    placeholder = plain(field.placeholder, PLACEHOLDER_LIMIT) if field.placeholder else None
    default = field.default
    if field.type == "number":
        shown = number_shown(field, default)
        low, high = number_range(field, default)
        return NumberInputElement(
            action_id=VALUE_ACTION,
            is_decimal_allowed=not whole_input(field, default),
            placeholder=placeholder,
            initial_value=shown,
            min_value=low,
            max_value=high,
        )
    if field.type == "date":
        shown = default if isinstance(default, str) else None
        return DatePickerElement(action_id=VALUE_ACTION, placeholder=placeholder, initial_date=shown)
    if field.type == "checkbox":
        return _yes_no_element(field, locale)
    if field.type in ("select", "multi_select") and field.options:
        return _choice_element(field, locale, placeholder)
    text = default if isinstance(default, str) and shows_default(field) else None
    shortest, longest = text_length(field, text)
    return PlainTextInputElement(
        action_id=VALUE_ACTION,
        multiline=field.type == "textarea" or "\n" in (text or ""),
        placeholder=placeholder,
        initial_value=text,
        min_length=shortest,
        max_length=longest,
    )


def _proposed(request: HumanInputRequest, field: FormField) -> str:
    """The hint naming a hidden default: "Proposed: Yes" or the default options' labels."""
    if field.type == "checkbox":
        value = ui_text("yes" if field.default is True else "no", request.locale)
    else:
        chosen = field.default if isinstance(field.default, list) else [field.default]
        value = ", ".join(o.label.strip() for o in field.options if o.value in chosen)
    return ui_text("slack_proposed", request.locale, value=value)


def _as_shown(request: HumanInputRequest, field: FormField) -> tuple[FormField, str | None]:
    """The field as its input shows it, and the hint naming its hidden default (if hidden)."""
    if not hides_default(request, field):
        return field, None
    proposed = _proposed(request, field) if field.default is not None else None  # none: none named
    return field.model_copy(update={"default": None, "required": True}), proposed


def undecided(request: HumanInputRequest, state_values: dict[str, Any]) -> dict[str, str]:
    """Per-block errors for the fields ``hides_default`` shows unpicked and submitted so (Slack
    requires their inputs; a submission without the pick is refused all the same)."""
    errors: dict[str, str] = {}
    for index, field in enumerate(request.fields):
        state = (state_values.get(field_block_id(index)) or {}).get(VALUE_ACTION)
        if hides_default(request, field) and (state is None or _raw_value(field, state) is None):
            errors[field_block_id(index)] = ui_text("slack_pick_first", request.locale)
    return errors


def _input_block(index: int, request: HumanInputRequest, field: FormField) -> InputBlock:
    locale = request.locale
    hint = _hint_and_below(request, field)[0]
    field = _as_shown(request, field)[0]
    label = field.label.strip() or field.name
    if field.required:
        label = f"{cut(label, 1900)} *"
    return InputBlock(
        block_id=field_block_id(index),
        label=plain(label, 2000),
        element=_element(field, locale),
        hint=plain(hint, HINT_LIMIT) if hint else None,
        # A lone checkbox shows a value (unticked: "no"), so it never blocks the submit; a
        # required yes/no showing none is Yes / No radio buttons Slack requires a pick of.
        optional=not field.required or (field.type == "checkbox" and not asks_yes_or_no(field)),
    )


def _modal(
    callback_id: str,
    request: HumanInputRequest,
    metadata: str,
    blocks: list[Block],
    notify_on_close: bool | None = None,
) -> dict[str, Any]:
    locale = request.locale
    view = View(
        type="modal",
        callback_id=callback_id,
        title=plain(
            ui_text("fill_in" if callback_id == FORM_CALLBACK else "your_answer", locale), TITLE_LIMIT
        ),
        submit=plain(ui_text("submit", locale), TITLE_LIMIT),
        close=plain(ui_text("cancel", locale), TITLE_LIMIT),
        private_metadata=metadata,
        blocks=blocks[:_MODAL_BLOCKS],
        notify_on_close=notify_on_close,
    )
    return view.to_dict()


def render_form_modal(request: HumanInputRequest, metadata: str) -> dict[str, Any]:
    """The modal with one input block per form field, required fields marked."""
    blocks = question_blocks(request, 1, 1)
    for i, field in enumerate(request.fields):
        below = _full_labels_below(_hint_and_below(request, field)[1])
        if len(blocks) + 1 + len(below) > _MODAL_BLOCKS:
            break
        blocks += [_input_block(i, request, field), *below]
    return _modal(FORM_CALLBACK, request, metadata, blocks)


def render_other_modal(request: HumanInputRequest, metadata: str) -> dict[str, Any]:
    """The modal asking for a free-text answer ("Other…"). Closed unsubmitted, Slack says so
    (``notify_on_close``: a ``view_closed`` request), which ends the person's typed-answer window."""
    answer = InputBlock(
        block_id=OTHER_BLOCK,
        label=plain(ui_text("your_answer", request.locale), 2000),
        element=PlainTextInputElement(action_id=VALUE_ACTION, multiline=True),
    )
    blocks = [*question_blocks(request, 1, 1), answer]
    return _modal(OTHER_CALLBACK, request, metadata, blocks, notify_on_close=True)


def _raw_value(field: FormField, state: dict[str, Any]) -> Any:
    """One field's raw value from its element state; None when left empty."""
    kind = state.get("type")
    if field.type == "checkbox" and kind == "radio_buttons":  # Yes or No; None when neither
        picked = state.get("selected_option")
        value = picked.get("value") if isinstance(picked, dict) else None
        return True if value == "true" else False if value == "false" else None
    if field.type == "checkbox":
        return bool(state.get("selected_options"))
    if kind in ("plain_text_input", "number_input"):
        value = state.get("value")
        return value if value not in (None, "") else None
    if kind == "datepicker":
        return state.get("selected_date")
    if kind == "static_select":
        picked = state.get("selected_option") or {}
        return _option_value(field, picked.get("value"))
    if kind in ("multi_static_select", "checkboxes"):
        values = [_option_value(field, o.get("value")) for o in state.get("selected_options") or []]
        return [v for v in values if v is not None] or None
    return None


def _option_value(field: FormField, position: str | None) -> str | None:
    if position and position.isdigit() and 1 <= int(position) <= len(field.options):
        return field.options[int(position) - 1].value
    return None


def form_values(request: HumanInputRequest, state_values: dict[str, Any]) -> dict[str, Any]:
    """Raw form values ``{field name: value}`` from a ``view_submission``'s ``state.values``."""
    values: dict[str, Any] = {}
    for index, field in enumerate(request.fields):
        state = (state_values.get(field_block_id(index)) or {}).get(VALUE_ACTION)
        if state is None:
            continue
        value = _raw_value(field, state)
        if value is None and field.default is not None and not shows_default(field):
            continue  # it showed empty (a default too long to show): left as shown, it keeps it
        values[field.name] = "" if value is None else value  # emptied: no value, not its default
    return values


def out_of_bounds(request: HumanInputRequest, state_values: dict[str, Any]) -> dict[str, str]:
    """Per-block errors for the values outside their field's bounds (``FormField.bounds``): what
    the input could not check itself (``modal_bounds``) is said under the field, the modal kept
    open, rather than the agent asking the form again once it is closed."""
    typed = check_form_values(request, form_values(request, state_values)).values
    errors: dict[str, str] = {}
    for index, field in enumerate(request.fields):
        error = bound_error(field, typed.get(field.name), request.locale)
        if error is not None:
            errors[field_block_id(index)] = cut(error, 2000)
    return errors


def field_errors(request: HumanInputRequest, errors: dict[str, str]) -> dict[str, str]:
    """Per-field messages keyed by block id (``response_action: errors``); others go on the first field."""
    by_block: dict[str, str] = {}
    names = [field.name for field in request.fields]
    for name, message in errors.items():
        index = names.index(name) if name in names else 0
        block_id = field_block_id(index)
        by_block[block_id] = cut(f"{by_block[block_id]} {message}" if block_id in by_block else message, 2000)
    return by_block


def other_text(state_values: dict[str, Any]) -> str:
    """The free text typed in the "Other…" modal."""
    return ((state_values.get(OTHER_BLOCK) or {}).get(VALUE_ACTION) or {}).get("value") or ""
