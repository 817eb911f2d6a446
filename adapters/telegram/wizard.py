"""The step-by-step form: one field per step, then a summary (pure state transitions).

Telegram has no form widget, so a form request becomes a wizard in one message,
edited in place. Its state is a small JSON document kept in the gateway's shared
state (``wizard:{request_id}:{user}``), so another replica or a restarted one
continues where the person left off. Raw values are kept as the person gave them
(option values, lists, booleans, typed strings); the core types them on submit. A field
with a default (an approval's Edit: the argument's current value) starts with it, and
its step offers "Keep" to go on with it. An optional field emptied with "Clear" keeps ``""``
(sent so, it stays empty: left out, it would take its default again), except where emptying
cannot take effect (no Clear there): an approval's Edit (emptying an argument is no change the
person means), a graph's interrupt (left out of the answer, the field takes the graph's default
again), a checkbox (Yes / No is its answer).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from clarigate.agent.interrupt_kinds import INTERRUPT
from clarigate.agent.protocol import FormField, HumanInputRequest, check_form_values, ui_text
from clarigate.agent.protocol.bounds import bound_error
from clarigate.agent.protocol.catalog import joined, labelled
from clarigate.agent.protocol.risk import APPROVAL_SOURCE
from clarigate.gateway.boundary.messages import Attachment

TYPED_FIELDS = ("text", "textarea", "number", "date")
RECENT_EVENTS = 20  # inputs remembered per wizard: a redelivery comes within a few updates


class WizardState(BaseModel):
    """Where one person is in a form: the step (``len(fields)`` = summary) and values so far."""

    request_id: str
    token: str
    user_id: str
    chat_id: str
    message_id: str
    # When "Fill in" opened it (unix time; 0 in a wizard saved before there was this field): a
    # message written before then, delivered late, was meant for something else (``forms``).
    opened_at: float = 0.0
    step: int = 0
    # When the wizard last moved to another step (unix time; 0: not since it opened): a message
    # written before then was written for another step (``typed``).
    step_at: float = 0.0
    values: dict[str, Any] = Field(default_factory=dict)
    notice: str | None = None  # why the last input was not taken (shown with the step)
    # How many inputs in a row were not taken: shown from the second on, so a repeated wrong
    # value changes the message (an identical edit is refused as "message is not modified").
    tries: int = 0
    # Taps and messages already applied: a redelivered one (webhook retry, polling
    # takeover) is not applied again, even after other inputs (a toggle would flip back).
    recent_events: list[str] = Field(default_factory=list)
    # Photos and files sent with typed values (a caption is read as the message's text): they go
    # with the form's answer to the agent on Submit (``InboundAnswer.attachments``).
    attachments: list[Attachment] = Field(default_factory=list)

    def field(self, request: HumanInputRequest) -> FormField | None:
        """The field of the current step, or None on the summary."""
        return request.fields[self.step] if self.step < len(request.fields) else None

    @property
    def drawing(self) -> int:
        """Which drawing of this person's form the message shows: when it started showing this step
        (milliseconds), so another each time it shows another step or the form opens anew (Back,
        Edit, "Fill in" after it closed: the same step drawn again is another drawing), the same
        while the step stays (a toggle, a value refused). Its buttons carry it: a tap drawn for an
        earlier drawing, sent before the message changed, was a choice on a step the person left,
        even when the form shows that step again (``forms.Forms.step``)."""
        return int(max(self.step_at, self.opened_at) * 1000)

    def has_applied(self, event_id: str) -> bool:
        """True when the tap or message ``event_id`` was already applied to this wizard."""
        return event_id in self.recent_events

    def applied(self, event_id: str) -> WizardState:
        """This state, remembering that ``event_id`` has been applied."""
        return self.model_copy(update={"recent_events": [*self.recent_events, event_id][-RECENT_EVENTS:]})


def state_key(request_id: str, user_id: str) -> str:
    """The shared-state key of one person's wizard for one request."""
    return f"wizard:{request_id}:{user_id}"


def active_key(chat_id: str, user_id: str) -> str:
    """The pointer from (chat, person) to the wizard that takes their typed messages."""
    return f"wizard-active:{chat_id}:{user_id}"


def opened_key(chat_id: str, message_id: str, user_id: str) -> str:
    """Marks a message in which this person once opened a form (to say it closed, later)."""
    return f"wizard-opened:{chat_id}:{message_id}:{user_id}"


def closed_key(request_id: str, user_id: str) -> str:
    """Marks a form this person closed themselves (``/cancel``, ``/new``): a late tap opens it not."""
    return f"wizard-closed:{request_id}:{user_id}"


def defaults(request: HumanInputRequest) -> dict[str, Any]:
    """A new wizard's values: every field's default (its current value), shown on its step."""
    return {f.name: f.default for f in request.fields if f.default is not None}


def _advance(state: WizardState, **changes: Any) -> WizardState:
    return state.model_copy(update={"step": state.step + 1, "notice": None, "tries": 0, **changes})


def _refuse(state: WizardState, notice: str) -> WizardState:
    """The same step again, saying why the input was not taken."""
    return state.model_copy(update={"notice": notice, "tries": state.tries + 1})


def _with_value(state: WizardState, name: str, value: Any) -> dict[str, Any]:
    return {**state.values, name: value}


def choose(state: WizardState, request: HumanInputRequest, index: int) -> WizardState:
    """A select option (1-based) was picked: keep its value and go on."""
    current = state.field(request)
    if current is None or current.type != "select" or not 1 <= index <= len(current.options):
        return state
    return _advance(state, values=_with_value(state, current.name, current.options[index - 1].value))


def toggle(state: WizardState, request: HumanInputRequest, index: int) -> WizardState:
    """A multi_select option (1-based) was tapped: add or remove it, stay on the step."""
    current = state.field(request)
    if current is None or current.type != "multi_select" or not 1 <= index <= len(current.options):
        return state
    value = current.options[index - 1].value
    chosen = list(state.values.get(current.name) or [])
    chosen = [v for v in chosen if v != value] if value in chosen else chosen + [value]
    # Keep the options' order so the summary reads like the question.
    ordered = [o.value for o in current.options if o.value in chosen]
    return state.model_copy(
        update={"values": _with_value(state, current.name, ordered), "notice": None, "tries": 0}
    )


def done(state: WizardState, request: HumanInputRequest) -> WizardState:
    """The multi_select step is finished; a required one needs at least one choice."""
    current = state.field(request)
    if current is None or current.type != "multi_select":
        return state
    if current.required and not state.values.get(current.name):
        return _refuse(state, _required_notice(current, request))
    return _advance(state)


def set_checkbox(state: WizardState, request: HumanInputRequest, checked: bool) -> WizardState:
    """A checkbox step answered Yes or No."""
    current = state.field(request)
    if current is None or current.type != "checkbox":
        return state
    return _advance(state, values=_with_value(state, current.name, checked))


def type_value(state: WizardState, request: HumanInputRequest, text: str) -> WizardState:
    """A typed answer for the current step: checked by the protocol (its type, then a typed
    interrupt's bounds), re-asked if wrong, the earlier steps' values kept.

    Text, number and date steps expect one; on a choice step a typed label, number
    or yes/no works like the buttons (people type rather than tap).
    """
    current = state.field(request)
    if current is None:
        return state
    text = text.strip()
    if not text:
        return _refuse(state, _required_notice(current, request))
    checked = check_form_values(request, {current.name: text})
    error = checked.errors.get(current.name)
    if error and current.type == "number" and "," in text:  # "3,5": said how, never guessed
        error = f"{error} {ui_text('wizard_number_dot', request.locale)}"
    # then its bounds (a typed interrupt's range or length), in the catalog's words, as the terminal
    error = error or bound_error(current, checked.values.get(current.name), request.locale)
    if error:
        return _refuse(state, error)
    # Typed fields keep the text as given (the core types it on submit); choices keep
    # what their buttons would have stored (option values, a list, a boolean).
    value = text if current.type in TYPED_FIELDS else checked.values.get(current.name, text)
    return _advance(state, values=_with_value(state, current.name, value))


def takes_typed(state: WizardState, request: HumanInputRequest, text: str) -> bool:
    """True when the current step takes ``text`` as its value: a text step any text, another step
    a value it accepts (an option's label or number, yes or no, a number, a date)."""
    current = state.field(request)
    if current is None:
        return False
    return current.type in ("text", "textarea") or type_value(state, request, text).notice is None


def typed(state: WizardState, request: HumanInputRequest, text: str, written: float) -> WizardState:
    """A message written at ``written`` for this wizard: the current step's value (``type_value``),
    unless it was written before the step showed (``step_at``), while an earlier one did, and
    delivered late. It fills no step then: not this one, which the person had not seen, nor the one
    it was written for, which they moved on from (and which may have a value they see as given);
    the step says so, and they send it again if it is meant for it."""
    if written < state.step_at:
        return _refuse(state, ui_text("wizard_written_earlier", request.locale))
    return type_value(state, request, text)


def moved(before: WizardState, after: WizardState, now: float) -> WizardState:
    """``after`` (a transition of ``before``), noting ``now`` as when its step showed if it is
    another step than ``before``'s (the message showing it is edited right away)."""
    return after if after.step == before.step else after.model_copy(update={"step_at": now})


def back(state: WizardState) -> WizardState:
    """One step back (values kept, so the person sees what they gave)."""
    return state.model_copy(update={"step": max(0, state.step - 1), "notice": None, "tries": 0})


def skip(state: WizardState, request: HumanInputRequest) -> WizardState:
    """Go on without typing: a field that has a value keeps it ("Next", after Back or Edit);
    an empty optional one stays empty ("Skip"); an empty required one is asked again."""
    current = state.field(request)
    if current is None:
        return state
    if current.name in state.values:
        return _advance(state)
    if current.required:
        return _refuse(state, _required_notice(current, request))
    return _advance(state)


def keep(state: WizardState, request: HumanInputRequest) -> WizardState:
    """ "Keep": the field takes its current value (its default) again, and the wizard goes on."""
    current = state.field(request)
    if current is None or current.default is None:
        return state
    return _advance(state, values=_with_value(state, current.name, current.default))


def may_clear(request: HumanInputRequest, form_field: FormField) -> bool:
    """Whether "Clear" may empty the field: an optional one that is no checkbox (Yes / No is its
    answer), unless it shows a default that emptying cannot remove: an approval's Edit (the
    argument's current value: emptying it is no edit the person means) or a graph's interrupt
    (an emptied field is left out of its answer, and the graph takes its default again), unless
    the interrupt's form, asked again, shows what the person gave where the graph has no default
    (``FormField.clearable``: emptied, it stays empty)."""
    if form_field.required or form_field.type == "checkbox":
        return False
    if form_field.default is None or request.source not in (APPROVAL_SOURCE, INTERRUPT):
        return True
    return request.source == INTERRUPT and bool(form_field.clearable)


def is_blank(value: Any) -> bool:
    """True for a value that gives the field nothing (what "Clear" leaves, an empty choice)."""
    return value is None or value == "" or value == []


def clear(state: WizardState, request: HumanInputRequest) -> WizardState:
    """Empty an optional field's value and stay on it (required fields keep theirs).

    A field with a default keeps ``""``: the core then takes it as emptied, where a field left
    out takes its default (the value it showed) again.
    """
    current = state.field(request)
    if current is None or not may_clear(request, current):
        return state
    values = {k: v for k, v in state.values.items() if k != current.name}
    if current.default is not None:
        values[current.name] = ""
    return state.model_copy(update={"values": values, "notice": None, "tries": 0})


def edit(state: WizardState) -> WizardState:
    """From the summary back to the first step, values kept."""
    return state.model_copy(update={"step": 0, "notice": None, "tries": 0})


def show_errors(state: WizardState, request: HumanInputRequest, errors: dict[str, str]) -> WizardState:
    """The core refused the values: go to the first field with an error and say why."""
    for index, form_field in enumerate(request.fields):
        if form_field.name in errors:
            return _refuse(state, errors[form_field.name]).model_copy(update={"step": index})
    message = joined(errors.values(), request.locale, "item_sep") or ui_text("invalid_values", request.locale)
    return _refuse(state, message)


def _required_notice(form_field: FormField, request: HumanInputRequest) -> str:
    return labelled(form_field.label, ui_text("required", request.locale), request.locale)
