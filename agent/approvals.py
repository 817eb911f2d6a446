"""A ``HumanInTheLoopMiddleware`` interrupt shown as an approval, and its decisions.

The request (``action_requests`` + ``review_configs``, or a ``per_call`` ``tool_approval``) is a
risk confirmation with the options "Approve" and "Reject" (批准 / 拒绝 in Chinese), and where every
reviewed tool allows them "Edit" (the arguments form: ``clarigate.agent.approval_edits``) and
"Reply instead" (a ``respond`` decision: the person's message is the tool's result, the tool is
not run). The review's ``description`` leads the context, before the calls themselves; calls that
do not fit in it (200 characters) keep their names there and are shown in full right above the
question (``approval_asked``), so Approve never runs a call the person could not read. A typed
answer other than an option the approval offers is a rejection with that text as the reason
(only the decisions the review allows are ever sent); a typed approve that was not the option
picked ("批准" to an English approval, "approve.") asks again, so that Approve is confirmed as
every pick of it is; a Cancel (a declined answer) rejects. A review that allows no ``reject`` is
turned down with ``respond`` (the reason as the tool's result) where it allows that; one that
allows neither (approve and edit only) is turned down all the same, without a decision: its calls
get the reason as their result and the tool does not run (``NotApproved``,
``clarigate.agent.not_approved``). Every approval can be dismissed. Resumed with the middleware's
decision shape: ``{"decisions": [...]}`` (batched) or
one decision (per call).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from clarigate.agent.interrupt_kinds import APPROVAL, APPROVAL_RESPOND, AskAgain, Asked, NotApproved, as_kind
from clarigate.agent.protocol import HumanInputRequest, HumanInputResponse, catalog, normalize_request
from clarigate.agent.protocol.coerce import clean, fold
from clarigate.agent.protocol.graphemes import shorten
from clarigate.agent.protocol.models import MAX_STRING, Locale
from clarigate.agent.shown_above import code_block

#: Approval option labels in every locale: a typed "Approve" (or 批准) answers on every channel.
APPROVE_LABELS = {fold(w) for w in catalog.every("approve")}
REJECT_LABELS = {fold(w) for w in catalog.every("reject")}
EDIT_LABELS = {fold(w) for w in catalog.every("edit")}
RESPOND_LABELS = {fold(w) for w in catalog.every("approval_respond")}
_TRAILING_MARKS = ".!?,;:。、…~ "  # as a typed option pick sets them aside
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


def _described(actions: Sequence[Action]) -> list[str]:
    """The reviews' own descriptions (those somebody wrote), each once."""
    written = [a.description.strip() for a in actions if a.description.strip()]
    return list(dict.fromkeys(d for d in written if not d.startswith(_DEFAULT_DESCRIPTION)))


def _shares(lengths: Sequence[int], least: Sequence[int], room: int) -> list[int]:
    """``room`` shared out among texts of ``lengths``: each gets its ``least`` first, then what is
    left goes evenly, the short ones whole."""
    shares = list(least)
    left, count = room - sum(least), len(lengths)
    for index in sorted(range(len(lengths)), key=lambda i: lengths[i] - least[i]):
        more = min(lengths[index] - least[index], max(left // count, 0))
        shares[index], left, count = shares[index] + more, left - more, count - 1
    return shares


#: A backtick in a call shown as a code span, written as JSON writes it (``\u0060``): the span
#: stays one span, and the call reads as it is.
_TICK = "\\u0060"


def _shown(action: Action) -> str:
    """A call as the approval's text shows it: a Markdown code span, so that every platform shows
    it literally (no bold, no link hiding its address), whatever its arguments hold."""
    return f"`{_call_text(action).replace('`', _TICK)}`"


def _call_within(action: Action, room: int) -> str:
    """One call (a code span, ``_shown``) within ``room`` characters: its name whole, its
    arguments as far as they fit."""
    text, head = _shown(action), f"`{action.name.replace('`', _TICK)}("
    if len(text) <= room:
        return text
    return f"{head}{shorten(text[len(head) : -2], max(room - len(head) - 2, 1))})`"


def _least(action: Action) -> int:
    """The room a call needs at least: its name (``name(…)``, a code span)."""
    return min(len(_shown(action)), len(action.name.replace("`", _TICK)) + 5)


def _calls_within(actions: Sequence[Action], room: int) -> str:
    """The calls on one line within ``room`` characters: every call's name, its arguments as far
    as they fit (``run_sql(query="SELECT id, na…"); drop_table(name="customers")``)."""
    lengths = [len(_shown(a)) for a in actions]
    shares = _shares(lengths, [_least(a) for a in actions], room - len("; ") * (len(actions) - 1))
    parts = [_call_within(a, share) for a, share in zip(actions, shares, strict=True)]
    return cut_line("; ".join(parts), room)


def _context(actions: Sequence[Action], locale: Locale, above: bool = False) -> tuple[str, str | None]:
    """``(context, shown above)``: the reviews' descriptions, then the calls.

    When they do not fit, every call keeps its name, then the line of ours, then the arguments
    as far as they fit, then the descriptions in what is left; with ``above``, the calls go in
    full into the reply right above the question (``_in_full``), and the context says so.
    Without it (a question shown with nothing above it) the context is only cut.
    """
    described = _described(actions)
    whole = "\n".join([*described, "; ".join(map(_shown, actions))])
    if len(whole) <= MAX_STRING:
        return whole, None
    notes = [catalog.text("approval_calls_above", locale)] if above else []
    names = sum(map(_least, actions)) + len("; ") * (len(actions) - 1)
    head = cut_line("\n".join(notes), max(MAX_STRING - names - 1, 1)) if notes else ""
    calls = _calls_within(actions, MAX_STRING - len(head) - (1 if head else 0))
    room = MAX_STRING - len(head) - len(calls) - (2 if head else 1)  # for the descriptions
    about = cut_line("\n".join(described), room) if described and room > 3 else ""
    context = "\n".join(part for part in (head, about, calls) if part)
    return context, (_in_full(actions) if above else None)


def _in_full(actions: Sequence[Action]) -> str:
    """The reply showing every call in full, one a line, after the reviews' descriptions (the
    question right below says what they are)."""
    described = _described(actions)
    return code_block(clean("\n".join([*described, *([""] if described else []), *map(_call_text, actions)])))


#: Each decision and the catalog key of its option's label.
_LABEL_KEYS = {"approve": "approve", "reject": "reject", "edit": "edit", "respond": "approval_respond"}


def offered(actions: Sequence[Action]) -> list[str]:
    """The decisions the approval offers: each one every reviewed call allows (Edit only for
    calls with arguments to edit)."""
    allowed = [set(a.allowed) for a in actions] or [{"approve", "reject"}]
    found = [d for d in _LABEL_KEYS if all(d in a for a in allowed)]
    return [d for d in found if d != "edit" or any(a.args for a in actions)]


def _options(actions: Sequence[Action], locale: Locale) -> list[str]:
    """Approve, Reject, Edit, Reply instead: each one every reviewed call allows."""
    return [catalog.text(_LABEL_KEYS[d], locale) for d in offered(actions)]


def approval_asked(interrupt_id: str, actions: Sequence[Action], locale: Locale, above: bool = True) -> Asked:
    """Approve / Reject (/ Edit / Reply instead) for the tool calls of one HITL interrupt, and
    (``above``) the calls in full to show right above it when it cannot hold them."""
    if len(actions) == 1:
        question = catalog.text("approval_question_one", locale, name=actions[0].name)
    else:
        question = catalog.text("approval_question_many", locale, n=len(actions))
    context, in_full = _context(actions, locale, above)
    args = {
        "question": question,
        "clarification_type": "risk_confirmation",
        "context": context,
        "options": _options(actions, locale),
    }
    request = _only_offered(normalize_request(args, tool_call_id=interrupt_id), args["options"])
    return Asked(as_kind(request, APPROVAL, interrupt_id, APPROVAL, locale), in_full)


def _only_offered(request: HumanInputRequest, labels: Sequence[str]) -> HumanInputRequest:
    """``request`` without the Cancel option a confirmation of one option gets (``normalize``):
    an approval's own dismissal (the Cancel every question has) turns its calls down already,
    so an approve-only review shows one Cancel, not two."""
    kept = [option for option in request.options if option.label in labels]
    if not kept or len(kept) == len(request.options):
        return request
    return request.model_copy(update={"options": kept})


def approval_request(interrupt_id: str, actions: Sequence[Action], locale: Locale) -> HumanInputRequest:
    """The approval alone, for a question shown with nothing above it: every call's name, its
    arguments as far as they fit."""
    return approval_asked(interrupt_id, actions, locale, above=False).request


def can_decline(actions: Sequence[Action]) -> bool:
    """True when every reviewed call can be turned down by a decision (``reject`` or ``respond``
    allowed): a Cancel or a new message resumes the approval with it."""
    return all("reject" in a.allowed or "respond" in a.allowed for a in actions)


def declined_decisions(
    value: Mapping[str, Any], actions: Sequence[Action], message: str | None, locale: Locale
) -> Any:
    """Decisions turning every call down, none run: ``reject`` with ``message`` where allowed,
    else ``respond`` with it (or "The person declined this action." when there is none);
    ``NotApproved`` with those words when a call allows neither (no decision stands for the
    person's: its calls are answered without resuming it)."""
    said = message or catalog.text("approval_declined", locale)
    if not can_decline(actions):
        return NotApproved(said)
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
        "context": _context(actions, locale)[0],
    }
    request = normalize_request(args, tool_call_id=interrupt_id)
    return as_kind(request, APPROVAL_RESPOND, interrupt_id, APPROVAL, locale)


def choice_of(response: HumanInputResponse) -> str | None:
    """``approve`` / ``reject`` / ``edit`` / ``respond`` for an option answer, or a typed label in
    any language (case and width aside, a trailing ``.``, ``!`` or ``?`` set aside)."""
    if response.response_kind not in ("option", "text"):
        return None
    label = fold(response.value).strip().rstrip(_TRAILING_MARKS).strip()
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
    if choice not in (*offered(actions), "reject"):
        choice = None  # a decision the review does not allow is no pick: its text is the reason
    if choice == "approve" and response.response_kind == "text":
        return _approve_first(interrupt_id, actions, locale)
    if choice == "edit":
        return AskAgain(edit_request(interrupt_id, actions, locale))
    if choice == "respond":
        return AskAgain(respond_request(interrupt_id, actions, locale))
    if choice == "approve":
        return decisions_for(value, [{"type": "approve"} for _ in actions])
    reason = None if choice == "reject" else response.value.strip()  # typed text: the reason
    return declined_decisions(value, actions, reason, locale)


def _approve_first(interrupt_id: str, actions: Sequence[Action], locale: Locale) -> AskAgain:
    """A typed approve that was not the question's own option picked ("批准" to an English
    approval, "approve."): the approval asked again, saying to pick Approve, so that it is
    confirmed as every pick of it is; never approved at once."""
    asked = approval_asked(interrupt_id, actions, locale)
    note = catalog.text("approval_typed_approve", locale, option=catalog.text("approve", locale))
    return AskAgain(asked.request, "\n\n".join(t for t in (note, asked.in_full) if t))
