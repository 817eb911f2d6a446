"""LangGraph interrupts shown as clarifications, and answers turned into ``Command(resume=...)``.

An ``interrupt(value)`` becomes a ``HumanInputRequest`` every renderer already shows:

- a human_input request (the protocol's request shape, or at least a ``question``) as itself;
  resumed with the answer's payload (``HumanInputResponse.to_payload()``);
- a ``HumanInTheLoopMiddleware`` request (``action_requests`` + ``review_configs``, or a
  ``per_call`` ``tool_approval``) as an *approval*: a risk confirmation with the options
  "Approve" and "Reject" (批准 / 拒绝 in Chinese) and, where every reviewed tool allows it,
  "Edit", which asks a second question: a form of the tool's arguments, each field filled in
  with the argument's current value (a checkbox ticked when true, a number, a date, JSON text
  for lists and objects); only a field whose value differs from the one it showed is an edit,
  so a field left as shown (or blank) keeps the argument's value and type. A typed answer
  other than an option is a rejection with that text as the reason; a Cancel (a declined
  answer) rejects. Resumed with
  the middleware's decision shape: ``{"decisions": [...]}`` (batched) or one decision (per call);
- anything else as a free-text question showing the value; resumed with the answer's text.

The request id says what is pending, so a later run knows how to resume:
``interrupt:<id>``, ``approval:<id>``, ``approval-edit:<id>`` (``<id>`` is the interrupt's id).
Requests go through the same pending-record path as ``ask_clarification``'s, with the same
durability, expiry, claim and who-may-answer rules.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from clarigate.agent.protocol import (
    HumanInputRequest,
    HumanInputResponse,
    answer_declined,
    catalog,
    normalize_request,
)
from clarigate.agent.protocol.models import MAX_STRING, RESERVED_FIELD_NAMES, Locale

INTERRUPT, APPROVAL, APPROVAL_EDIT = "interrupt", "approval", "approval-edit"
KINDS = (APPROVAL_EDIT, APPROVAL, INTERRUPT)  # longest prefix first

#: Approval option labels in every locale: a typed "Approve" (or 批准) answers on every channel.
APPROVE_LABELS = {w.casefold() for w in catalog.every("approve")}
REJECT_LABELS = {w.casefold() for w in catalog.every("reject")}
EDIT_LABELS = {w.casefold() for w in catalog.every("edit")}


@dataclass(frozen=True)
class Action:
    """One tool call under review: its name, arguments and which decisions are allowed."""

    name: str
    args: dict[str, Any]
    allowed: tuple[str, ...]


def request_id_for(kind: str, interrupt_id: str) -> str:
    """``approval:<id>`` and the like."""
    return f"{kind}:{interrupt_id}"


def parse_request_id(request_id: str) -> tuple[str, str] | None:
    """``(kind, interrupt id)`` for an interrupt's request id, None for anything else."""
    for kind in KINDS:
        if request_id.startswith(kind + ":"):
            return kind, request_id[len(kind) + 1 :]
    return None


def is_hitl(value: Any) -> bool:
    """True for a HumanInTheLoopMiddleware interrupt value (batched or per call)."""
    if not isinstance(value, Mapping):
        return False
    return isinstance(value.get("action_requests"), list) or value.get("type") == "tool_approval"


def is_human_input(value: Any) -> bool:
    """True for a value in the protocol's request shape (or anything with a question)."""
    return isinstance(value, Mapping) and (
        value.get("kind") == "human_input_request" or isinstance(value.get("question"), str)
    )


def actions_of(value: Mapping[str, Any]) -> list[Action]:
    """The tool calls a HITL interrupt asks about, with their allowed decisions."""
    if value.get("type") == "tool_approval":
        allowed = tuple(value.get("allowed_decisions") or ("approve", "edit", "reject"))
        return [Action(str(value.get("name", "")), dict(value.get("args") or {}), allowed)]
    configs = {c.get("action_name"): c for c in value.get("review_configs") or [] if isinstance(c, Mapping)}
    actions = []
    for raw in value.get("action_requests") or []:
        config = configs.get(raw.get("name"), {})
        allowed = tuple(config.get("allowed_decisions") or ("approve", "reject"))
        actions.append(Action(str(raw.get("name", "")), dict(raw.get("args") or {}), allowed))
    return actions


def request_for(interrupt_id: str, value: Any, locale: Locale = "en") -> HumanInputRequest:
    """The request that shows interrupt ``interrupt_id`` with ``value`` to a person."""
    if is_hitl(value):
        return approval_request(interrupt_id, actions_of(value), locale)
    if is_human_input(value):
        request = normalize_request(dict(value), tool_call_id=interrupt_id)
        return request.model_copy(
            update={"request_id": request_id_for(INTERRUPT, interrupt_id), "source": INTERRUPT}
        )
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    request = normalize_request({"question": text or "?", "clarification_type": "missing_info"}, interrupt_id)
    return request.model_copy(
        update={"request_id": request_id_for(INTERRUPT, interrupt_id), "source": INTERRUPT}
    )


def _call_text(action: Action) -> str:
    args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False, default=str)}" for k, v in action.args.items())
    return f"{action.name}({args})"


def _cut(text: str, limit: int = MAX_STRING) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def approval_request(interrupt_id: str, actions: Sequence[Action], locale: Locale) -> HumanInputRequest:
    """Approve / Reject (/ Edit) for the tool calls of one HITL interrupt."""
    if len(actions) == 1:
        question = catalog.text("approval_question_one", locale, name=actions[0].name)
    else:
        question = catalog.text("approval_question_many", locale, n=len(actions))
    allowed = [set(a.allowed) for a in actions] or [{"approve", "reject"}]
    options = []
    if all("approve" in a for a in allowed):
        options.append(catalog.text("approve", locale))
    if all("reject" in a for a in allowed):
        options.append(catalog.text("reject", locale))
    if all("edit" in a for a in allowed) and any(a.args for a in actions):
        options.append(catalog.text("edit", locale))
    args = {
        "question": question,
        "clarification_type": "risk_confirmation",
        "context": _cut("; ".join(_call_text(a) for a in actions)),
        "options": options,
    }
    request = normalize_request(args, tool_call_id=interrupt_id)
    return request.model_copy(
        update={"request_id": request_id_for(APPROVAL, interrupt_id), "source": APPROVAL, "locale": locale}
    )


_PLAIN_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9_-]{0,46}[A-Za-z0-9])?")


def _field_names(actions: Sequence[Action]) -> dict[tuple[int, str], str]:
    """The form field name of each (call, argument): the argument's own name where a form
    keeps it as it is (``1_table`` for the first of several calls), else ``arg_<n>``; unique
    whatever the case, so every field maps back to exactly one argument."""
    many = len(actions) > 1
    names: dict[tuple[int, str], str] = {}
    taken: set[str] = set()
    for index, action in enumerate(actions):
        for arg in action.args:
            name = f"{index + 1}_{arg}" if many else arg
            if not _PLAIN_NAME.fullmatch(name) or name in RESERVED_FIELD_NAMES or name.casefold() in taken:
                name = f"arg_{len(names) + 1}"
                while name.casefold() in taken:
                    name += "_"
            taken.add(name.casefold())
            names[(index, arg)] = name
    return names


_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _is_iso_date(value: str) -> bool:
    if not _ISO_DATE.fullmatch(value):
        return False
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        return False
    return True


def _field_type(value: Any) -> str:
    if isinstance(value, bool):
        return "checkbox"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str) and _is_iso_date(value):
        return "date"
    if isinstance(value, str) and "\n" not in value and len(value) <= 80:
        return "text"
    return "textarea"


def _shown(value: Any) -> Any:
    """The field's default for an argument: itself for scalars, JSON text for anything else."""
    if isinstance(value, bool | int | float | str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _arg_field(name: str, label: str, value: Any, shown: Any) -> dict[str, Any]:
    text = shown if isinstance(shown, str) else json.dumps(shown, ensure_ascii=False, default=str)
    field_type = _field_type(value)
    return {
        "name": name,
        "label": label,
        "type": field_type,
        "required": False,
        "placeholder": None if field_type == "checkbox" else _cut(text, 150),
        "default": shown,
    }


def edit_request(
    interrupt_id: str,
    actions: Sequence[Action],
    locale: Locale,
    shown: Mapping[str, Any] | None = None,
    problem: str | None = None,
) -> HumanInputRequest:
    """A form of the reviewed calls' arguments; each field is filled in with the current value.

    ``shown`` fills fields with what the person gave instead (the form asked again, with
    ``problem`` saying why).
    """
    many = len(actions) > 1
    names = _field_names(actions)
    fields = []
    for index, action in enumerate(actions):
        for arg, value in action.args.items():
            name = names[(index, arg)]
            label = f"{action.name}.{arg}" if many else arg
            given = (shown or {}).get(name, _shown(value))
            fields.append(_arg_field(name, label, value, given))
    name = actions[0].name if len(actions) == 1 else ", ".join(a.name for a in actions)
    context = catalog.text("approval_edit_context", locale)
    args = {
        "question": catalog.text("approval_edit_question", locale, name=name),
        "clarification_type": "risk_confirmation",
        "context": f"{problem} {context}" if problem else context,
        "fields": fields,
    }
    request = normalize_request(args, tool_call_id=interrupt_id)
    return request.model_copy(
        update={
            "request_id": request_id_for(APPROVAL_EDIT, interrupt_id),
            "source": APPROVAL,
            "locale": locale,
        }
    )


@dataclass(frozen=True)
class AskAgain:
    """The answer does not resume the run yet: show this request instead (Edit → the form)."""

    request: HumanInputRequest


class _BadJson(ValueError):
    """An edited JSON argument that does not parse."""


def _edited_value(original: Any, given: Any) -> Any:
    """The value a changed form field gives back, in the original argument's type."""
    if isinstance(original, bool) or isinstance(original, str):
        return given
    if isinstance(original, float) and isinstance(given, int) and not isinstance(given, bool):
        return float(given)  # 2.5 edited to "3" stays a float
    if isinstance(original, int | float) or not isinstance(given, str):
        return given
    try:
        return json.loads(given)
    except ValueError as error:
        if original is None:
            return given  # nothing said what the argument holds: the text is the value
        raise _BadJson(str(error).split(":")[0]) from None


def _choice(response: HumanInputResponse) -> str | None:
    """``approve`` / ``reject`` / ``edit`` for an option answer (or a typed label)."""
    if response.response_kind not in ("option", "text"):
        return None
    label = response.value.strip().casefold()
    if label in APPROVE_LABELS:
        return "approve"
    if label in REJECT_LABELS:
        return "reject"
    if label in EDIT_LABELS:
        return "edit"
    return None


def _decisions(value: Mapping[str, Any], decisions: list[dict[str, Any]]) -> Any:
    """The resume value in the shape the middleware waits for."""
    if value.get("type") == "tool_approval":
        return decisions[0]
    return {"decisions": decisions}


def _reject(message: str | None) -> dict[str, Any]:
    return {"type": "reject", "message": message} if message else {"type": "reject"}


def resume_value(
    kind: str, interrupt_id: str, value: Any, response: HumanInputResponse, locale: Locale = "en"
) -> Any | AskAgain:
    """What ``Command(resume=...)`` carries for ``response`` to the interrupt, or ``AskAgain``."""
    if kind == INTERRUPT:
        if is_human_input(value):
            return response.to_payload()
        return response.value
    actions = actions_of(value)
    if response.response_kind == "declined":
        return _decisions(value, [_reject(catalog.text("approval_declined", locale)) for _ in actions])
    if kind == APPROVAL:
        choice = _choice(response)
        if choice == "edit":
            return AskAgain(edit_request(interrupt_id, actions, locale))
        if choice == "approve":
            return _decisions(value, [{"type": "approve"} for _ in actions])
        reason = None if choice == "reject" else response.value.strip()  # typed text: the reason
        return _decisions(value, [_reject(reason) for _ in actions])
    # APPROVAL_EDIT: a form answer edits; anything typed instead rejects with it as the reason
    if response.response_kind != "form" or response.values is None:
        return _decisions(value, [_reject(response.value.strip() or None) for _ in actions])
    return _edit_decisions(interrupt_id, value, actions, response.values, locale)


def _edit_decisions(
    interrupt_id: str,
    value: Mapping[str, Any],
    actions: Sequence[Action],
    values: Mapping[str, Any],
    locale: Locale,
) -> Any | AskAgain:
    """Approve the calls nobody changed; edit the others with only the changed arguments.

    A field counts as changed when its value differs from the one it showed (its default):
    a field left as shown keeps the argument as it was, value and type.
    """
    form = edit_request(interrupt_id, actions, locale)
    defaults = {f.name: f.default for f in form.fields}
    labels = {f.name: f.label for f in form.fields}
    names = _field_names(actions)
    decisions = []
    for index, action in enumerate(actions):
        args, changed = dict(action.args), False
        for arg, original in action.args.items():
            name = names[(index, arg)]
            if name not in values or _same(values[name], defaults.get(name)):
                continue
            try:
                args[arg] = _edited_value(original, values[name])
            except _BadJson as error:
                problem = catalog.text("approval_edit_bad_json", locale, field=labels[name], error=error)
                return AskAgain(edit_request(interrupt_id, actions, locale, shown=values, problem=problem))
            changed = True
        if not changed or "edit" not in action.allowed:
            decisions.append({"type": "approve"})
        else:
            edited: dict[str, Any] = {"type": "edit", "edited_action": {"name": action.name, "args": args}}
            decisions.append(edited)
    return _decisions(value, decisions)


def superseded_value(interrupt_id: str, value: Any, locale: Locale = "en") -> Any:
    """What ``Command(resume=...)`` carries for an interrupt the person did not answer: they
    wrote a new message instead.

    A HITL interrupt: a ``reject`` decision for each reviewed call, saying so (the tool is not
    run); any other interrupt: what a declined answer with reason ``superseded`` resumes it
    with (the declined ``HumanInputResponse`` payload for a human_input request, else its text).
    """
    if is_hitl(value):
        message = catalog.text("approval_superseded", locale)
        return _decisions(value, [_reject(message) for _ in actions_of(value)])
    request = request_for(interrupt_id, value, locale)
    return resume_value(INTERRUPT, interrupt_id, value, answer_declined(request, None, "superseded"))


def _same(given: Any, default: Any) -> bool:
    """True when a typed form value is the one the field showed (``1`` is not ``True``)."""
    return type(given) is type(default) and given == default
