"""A ``HumanInTheLoopMiddleware`` interrupt shown as an approval, and its decisions.

The request (``action_requests`` + ``review_configs``, or a ``per_call`` ``tool_approval``) is a
risk confirmation with the options "Approve" and "Reject" (批准 / 拒绝 in Chinese), and where every
reviewed tool allows them "Edit" (the arguments form: ``clarigate.agent.approval_edits``) and
"Reply instead" (a ``respond`` decision: the person's message is the tool's result, the tool is
not run). The review's ``description`` leads the context, before the calls themselves. A typed
answer other than an option is a rejection with that text as the reason; a Cancel (a declined
answer) rejects. A review that allows no ``reject`` is turned down with ``respond`` (the reason
as the tool's result) where it allows that; one that allows neither is never turned down: its
approval is not dismissible, and a Cancel or a new message asks it again (``must_answer``).
Resumed with the middleware's decision shape: ``{"decisions": [...]}`` (batched) or one decision
(per call).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from clarigate.agent.interrupt_kinds import APPROVAL, APPROVAL_RESPOND, AskAgain, as_kind
from clarigate.agent.protocol import HumanInputRequest, HumanInputResponse, catalog, normalize_request
from clarigate.agent.protocol.graphemes import shorten
from clarigate.agent.protocol.models import MAX_STRING, Locale

#: Approval option labels in every locale: a typed "Approve" (or 批准) answers on every channel.
APPROVE_LABELS = {w.casefold() for w in catalog.every("approve")}
REJECT_LABELS = {w.casefold() for w in catalog.every("reject")}
EDIT_LABELS = {w.casefold() for w in catalog.every("edit")}
RESPOND_LABELS = {w.casefold() for w in catalog.every("approval_respond")}
#: How ``HumanInTheLoopMiddleware`` starts a description nobody configured: the call says more.
_DEFAULT_DESCRIPTION = "Tool execution requires approval"


@dataclass(frozen=True)
class Action:
    """One tool call under review: its name, arguments, which decisions are allowed, and the
    review's description (the ``description`` of its ``interrupt_on`` config)."""

    name: str
    args: dict[str, Any]
    allowed: tuple[str, ...]
    description: str = ""


def is_hitl(value: Any) -> bool:
    """True for a HumanInTheLoopMiddleware interrupt value (batched or per call)."""
    if not isinstance(value, Mapping):
        return False
    return isinstance(value.get("action_requests"), list) or value.get("type") == "tool_approval"


def _allowed_in(schema: Any) -> tuple[str, ...]:
    """The decision types a per-call interrupt's ``response_schema`` accepts (its ``type`` values)."""
    if not isinstance(schema, Mapping):
        return ()
    mapping = (schema.get("discriminator") or {}).get("mapping")
    if isinstance(mapping, Mapping):
        return tuple(str(k) for k in mapping)
    const = ((schema.get("properties") or {}).get("type") or {}).get("const")
    return (str(const),) if isinstance(const, str) else ()


def actions_of(value: Mapping[str, Any], schema: Any = None) -> list[Action]:
    """The tool calls a HITL interrupt asks about, with their allowed decisions (a per-call
    interrupt's from its ``response_schema`` when it has one)."""
    if value.get("type") == "tool_approval":
        allowed = tuple(
            value.get("allowed_decisions") or _allowed_in(schema) or ("approve", "edit", "reject")
        )
        description = str(value.get("description") or "")
        return [Action(str(value.get("name", "")), dict(value.get("args") or {}), allowed, description)]
    configs = {c.get("action_name"): c for c in value.get("review_configs") or [] if isinstance(c, Mapping)}
    actions = []
    for raw in value.get("action_requests") or []:
        config = configs.get(raw.get("name"), {})
        allowed = tuple(config.get("allowed_decisions") or ("approve", "reject"))
        description = str(raw.get("description") or "")
        actions.append(Action(str(raw.get("name", "")), dict(raw.get("args") or {}), allowed, description))
    return actions


def _call_text(action: Action) -> str:
    args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False, default=str)}" for k, v in action.args.items())
    return f"{action.name}({args})"


def cut_line(text: str, limit: int = MAX_STRING) -> str:
    """``text`` cut to ``limit`` characters, ending in ``…`` when cut, never inside a character as
    shown (an emoji sequence, a flag, a letter and its accent: ``graphemes``)."""
    return shorten(text, limit)


def _context(actions: Sequence[Action]) -> str:
    """The reviews' own descriptions (those somebody wrote), then the calls."""
    written = [a.description.strip() for a in actions if a.description.strip()]
    described = list(dict.fromkeys(d for d in written if not d.startswith(_DEFAULT_DESCRIPTION)))
    calls = "; ".join(_call_text(a) for a in actions)
    return cut_line("\n".join([*described, calls]))


def approval_request(interrupt_id: str, actions: Sequence[Action], locale: Locale) -> HumanInputRequest:
    """Approve / Reject (/ Edit / Reply instead) for the tool calls of one HITL interrupt."""
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
    if all("respond" in a for a in allowed):
        options.append(catalog.text("approval_respond", locale))
    args = {
        "question": question,
        "clarification_type": "risk_confirmation",
        "context": _context(actions),
        "options": options,
    }
    request = normalize_request(args, tool_call_id=interrupt_id)
    return dismissible_as(as_kind(request, APPROVAL, interrupt_id, APPROVAL, locale), actions)


def can_decline(actions: Sequence[Action]) -> bool:
    """True when every reviewed call can be turned down without running (``reject`` or
    ``respond`` allowed): a Cancel or a new message has a decision to stand for."""
    return all("reject" in a.allowed or "respond" in a.allowed for a in actions)


def dismissible_as(request: HumanInputRequest, actions: Sequence[Action]) -> HumanInputRequest:
    """``request`` (an approval, its Edit form) marked not dismissible when ``actions`` cannot be
    turned down: only an answer closes it."""
    return request if can_decline(actions) else request.model_copy(update={"dismissible": False})


def must_answer(interrupt_id: str, actions: Sequence[Action], locale: Locale) -> AskAgain:
    """The approval asked again after a Cancel or an answer it cannot take: it says first that it
    cannot be rejected or dismissed, only answered (or left with ``/new``)."""
    again = approval_request(interrupt_id, actions, locale)
    note = catalog.text("approval_answer_first", locale, new="/new")
    return AskAgain(again.model_copy(update={"context": cut_line(f"{note}\n{again.context}")}))


def declined_decisions(
    value: Mapping[str, Any], actions: Sequence[Action], message: str | None, locale: Locale
) -> Any | None:
    """Decisions turning every call down, none run: ``reject`` with ``message`` where allowed,
    else ``respond`` with it (or "The person declined this action." when there is none); None
    when a call allows neither (no decision stands for the person's)."""
    if not can_decline(actions):
        return None
    said = message or catalog.text("approval_declined", locale)
    decisions = [
        reject(message) if "reject" in a.allowed else {"type": "respond", "message": said} for a in actions
    ]
    return decisions_for(value, decisions)


def respond_request(interrupt_id: str, actions: Sequence[Action], locale: Locale) -> HumanInputRequest:
    """The question "Reply instead" asks: the message the model gets as the calls' result."""
    name = ", ".join(a.name for a in actions)
    args = {
        "question": catalog.text("approval_respond_question", locale, name=name),
        "clarification_type": "missing_info",
        "context": _context(actions),
    }
    request = normalize_request(args, tool_call_id=interrupt_id)
    return as_kind(request, APPROVAL_RESPOND, interrupt_id, APPROVAL, locale)


def choice_of(response: HumanInputResponse) -> str | None:
    """``approve`` / ``reject`` / ``edit`` / ``respond`` for an option answer (or a typed label)."""
    if response.response_kind not in ("option", "text"):
        return None
    label = response.value.strip().casefold()
    for choice, labels in (
        ("approve", APPROVE_LABELS),
        ("reject", REJECT_LABELS),
        ("edit", EDIT_LABELS),
        ("respond", RESPOND_LABELS),
    ):
        if label in labels:
            return choice
    return None


def decisions_for(value: Mapping[str, Any], decisions: list[dict[str, Any]]) -> Any:
    """The resume value in the shape the middleware waits for."""
    if value.get("type") == "tool_approval":
        return decisions[0]
    return {"decisions": decisions}


def reject(message: str | None) -> dict[str, Any]:
    """A ``reject`` decision, with the reason the model reads when there is one."""
    return {"type": "reject", "message": message} if message else {"type": "reject"}


def respond_decisions(
    value: Mapping[str, Any], actions: Sequence[Action], response: HumanInputResponse, locale: Locale
) -> Any:
    """The answer to "Reply instead": a ``respond`` decision with the person's message for each
    call; nothing typed turns the calls down instead (``declined_decisions``)."""
    message = response.value.strip()
    if not message:
        return declined_decisions(value, actions, None, locale)
    return decisions_for(value, [{"type": "respond", "message": message} for _ in actions])


def approval_decisions(
    interrupt_id: str,
    value: Mapping[str, Any],
    actions: Sequence[Action],
    response: HumanInputResponse,
    locale: Locale,
) -> Any | AskAgain:
    """The decisions an answer to the approval question makes (Edit and Reply instead ask again)."""
    from clarigate.agent.approval_edits import edit_request

    choice = choice_of(response)
    if choice == "edit":
        return AskAgain(edit_request(interrupt_id, actions, locale))
    if choice == "respond":
        return AskAgain(respond_request(interrupt_id, actions, locale))
    if choice == "approve":
        return decisions_for(value, [{"type": "approve"} for _ in actions])
    reason = None if choice == "reject" else response.value.strip()  # typed text: the reason
    declined = declined_decisions(value, actions, reason, locale)
    return must_answer(interrupt_id, actions, locale) if declined is None else declined
