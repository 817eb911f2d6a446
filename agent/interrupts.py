"""LangGraph interrupts shown as clarifications, and answers turned into ``Command(resume=...)``.

An ``interrupt(value)`` becomes a ``HumanInputRequest`` every renderer already shows:

- a ``HumanInTheLoopMiddleware`` request (``action_requests`` + ``review_configs``, or a
  ``per_call`` ``tool_approval``) as an *approval* (``clarigate.agent.approvals``: Approve, Reject,
  and where allowed Edit and Reply instead), resumed with the middleware's decisions;
- an interrupt with a ``response_schema`` (langgraph 1.2+) as a form of the schema's fields
  (``clarigate.agent.typed_interrupts``), resumed with values of the schema's types;
- a human_input request (the protocol's request shape, or at least a ``question``, a number asked
  as its text; ``choices`` read as its ``options``) as itself, with what its other keys hold shown
  as its context (``llm_output`` in LangGraph's review pattern: nothing the graph gave the person
  vanishes); one without a question but with options, fields or a context asks with its context
  (or that the agent waits for a reply); options that are not a list, or items that are no option,
  give no buttons and are named in one warning for the graph's author (``interrupt_options``);
  resumed with the answer's payload (``HumanInputResponse.to_payload()``, a picked option's
  ``value`` its value as the graph wrote it, ``False`` or ``3``, not the label shown nor its text);
- a ``{"prompt": …, "choices": […]}`` value as the question it names, with those options and its
  other keys as context; resumed as anything else is, with the answer's text (a picked choice's);
- anything else as a free-text question showing the value (a text longer than a question holds
  asks its last line or sentence ending in "?"; a value with no text, ``None`` or ``""``, asks
  that the agent waits for a reply); resumed with the answer's text.

A value that is a pydantic model or a dataclass is read as the dict it dumps to (what a LangGraph
server sends for it; ``clarigate.agent.interrupt_values``), asked and resumed as that dict is.

What a request cannot hold (200 characters a string) is shown in full right above it
(``asked_for``, ``clarigate.agent.shown_above``); ``request_for`` is the request alone.

The request id says what is pending (``clarigate.agent.interrupt_kinds``), so a later run knows
how to resume. Requests go through the same pending-record path as ``ask_clarification``'s, with
the same durability, expiry, claim and who-may-answer rules.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from clarigate.agent.approval_edits import edit_decisions, edit_request
from clarigate.agent.approvals import (
    Action,
    actions_of,
    approval_asked,
    approval_decisions,
    approval_request,
    declined_decisions,
    is_hitl,
    respond_decisions,
)
from clarigate.agent.interrupt_kinds import (
    APPROVAL,
    APPROVAL_EDIT,
    APPROVAL_RESPOND,
    INTERRUPT,
    KINDS,
    AskAgain,
    Asked,
    Dismissed,
    NotApproved,
    as_kind,
    asked_again,
    parse_request_id,
    request_id_for,
)
from clarigate.agent.interrupt_options import checked_options
from clarigate.agent.interrupt_values import plain_value
from clarigate.agent.protocol import (
    HumanInputRequest,
    HumanInputResponse,
    answer_declined,
    catalog,
    normalize_request,
)
from clarigate.agent.protocol.coerce import scalar_text
from clarigate.agent.protocol.given_values import as_given, normalize_with_given
from clarigate.agent.protocol.models import Locale
from clarigate.agent.protocol.normalize import aliases_read, read_key
from clarigate.agent.shown_above import fit_question
from clarigate.agent.typed_interrupts import rejected_asked, typed_asked, typed_resume

log = logging.getLogger(__name__)

__all__ = [
    "APPROVAL",
    "APPROVAL_EDIT",
    "APPROVAL_RESPOND",
    "INTERRUPT",
    "KINDS",
    "Action",
    "AskAgain",
    "Asked",
    "Dismissed",
    "actions_of",
    "approval_request",
    "asked_for",
    "edit_request",
    "is_hitl",
    "is_human_input",
    "parse_request_id",
    "rejected_asked",
    "request_for",
    "request_id_for",
    "resume_checked",
    "resume_value",
    "superseded_value",
]


#: Keys that make a dict without a question a question all the same (``{"context": …,
#: "options": […]}``): asked with its context as the question, else in words of the catalog's.
_ASKING_KEYS = ("options", "choices", "fields", "context")


def is_human_input(value: Any) -> bool:
    """True for a value in the protocol's request shape: with a question (text, or a number read
    as text), or without one (nor a ``prompt``) but with options, fields or a context."""
    if not isinstance(value, Mapping):
        return False
    question = value.get("question")
    if value.get("kind") == "human_input_request" or isinstance(question, str | int | float):
        return True
    return (
        question is None
        and value.get("prompt") is None
        and any(value.get(key) not in (None, "", [], {}) for key in _ASKING_KEYS)
    )


def _prompted(value: Any) -> bool:
    """True for a value naming its question ``prompt`` (``{"prompt": …, "choices": […]}``): asked
    as a human_input request is, resumed as a value outside the protocol's shape (with text)."""
    return (
        isinstance(value, Mapping)
        and not is_human_input(value)
        and isinstance(value.get("prompt"), str | int | float)
    )


def _typed(schema: Any) -> bool:
    return isinstance(schema, Mapping) and bool(schema)


#: The keys of the protocol's request shape (``type`` is read as ``clarification_type``): any
#: other key of an interrupt's value is the graph's own, shown to the person (``_extras``).
_PROTOCOL_KEYS = frozenset({*HumanInputRequest.model_fields, "version", "type"})


def _extras(value: Mapping[str, Any]) -> str:
    """What a human_input value holds beside the protocol's keys (``{"question": "Is this correct?",
    "llm_output": …}``, LangGraph's review pattern): one key's text alone, several as ``key: value``
    lines; "" when there is nothing else."""
    read = _PROTOCOL_KEYS | aliases_read(value)
    extras = {str(k): v for k, v in value.items() if k not in read and v not in (None, "", [], {})}
    shown = {
        k: v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)
        for k, v in extras.items()
    }
    if len(shown) == 1:
        return next(iter(shown.values()))
    return "\n".join(f"{key}: {text}" for key, text in shown.items())


def _as_text(value: Any) -> str:
    """A question's or context's text: a string as it is, any other value as JSON ("" for none)."""
    if isinstance(value, str) or (not value and not isinstance(value, int | float)):
        return value or ""
    return scalar_text(value) or json.dumps(value, ensure_ascii=False, default=str)


def _asked(interrupt_id: str, value: Any, locale: Locale, schema: Any, above: bool) -> Asked:
    value = plain_value(value)  # a pydantic model or a dataclass: asked as the same dict is
    if is_hitl(value):
        return approval_asked(interrupt_id, actions_of(value, schema), locale, above=above)
    if _typed(schema):
        return typed_asked(interrupt_id, value, schema, locale, above=above)
    if is_human_input(value) or _prompted(value):
        args, given = checked_options(interrupt_id, dict(value)), _as_text(value.get("context"))
        if read_key(args, "question") is None and given.strip():  # no question: its context asks
            args["question"], given = given, ""
        context = "\n\n".join(part for part in (given, _extras(value)) if part.strip())
    else:
        args, context = {"question": value, "clarification_type": "missing_info"}, ""
    text = _as_text(read_key(args, "question"))
    if not text.strip():  # None, "", {}: no words of the graph's to ask with
        text = catalog.text("interrupt_without_text", locale)
    question, context, in_full = fit_question(text, context, above)
    args.update(question=question, context=context or None)
    # the graph's words are fixed in its code; the words around them follow the person (``locale``)
    request = normalize_request(args, tool_call_id=interrupt_id, locale=locale)
    return Asked(as_kind(request, INTERRUPT, interrupt_id, INTERRUPT), in_full)


def asked_for(interrupt_id: str, value: Any, locale: Locale = "en", schema: Any = None) -> Asked:
    """How interrupt ``interrupt_id`` with ``value`` (and its ``response_schema``, when it has
    one) is asked: its request, and what the request cannot hold (a long text, a review's content,
    an approval's calls) in full, to show right above it (``Asked.in_full``)."""
    return _asked(interrupt_id, value, locale, schema, above=True)


def request_for(
    interrupt_id: str, value: Any, locale: Locale = "en", schema: Any = None
) -> HumanInputRequest:
    """The request that shows interrupt ``interrupt_id`` with ``value`` (and the interrupt's
    ``response_schema``, when it has one), alone: which question a thread waits for, with nothing
    shown above it, holding what fits (``asked_for`` for the question as a person gets it)."""
    return _asked(interrupt_id, value, locale, schema, above=False).request


def resume_value(
    kind: str,
    interrupt_id: str,
    value: Any,
    response: HumanInputResponse,
    locale: Locale = "en",
    schema: Any = None,
) -> Any | AskAgain | Dismissed:
    """What ``Command(resume=...)`` carries for ``response`` to the interrupt, ``AskAgain``,
    ``Dismissed`` (a declined answer its ``response_schema`` does not take: not resumed), or
    ``NotApproved`` (an approval no decision turns down, turned down: answered, not resumed)."""
    value = _resume_value(kind, interrupt_id, value, response, locale, schema)
    if isinstance(value, AskAgain):
        return AskAgain(asked_again(value.request, response.request_id), value.in_full)
    return value


def _resume_value(
    kind: str, interrupt_id: str, value: Any, response: HumanInputResponse, locale: Locale, schema: Any
) -> Any | AskAgain | Dismissed:
    value = plain_value(value)  # a pydantic model or a dataclass: resumed as the same dict is
    if kind == INTERRUPT:
        if _typed(schema) and not is_hitl(value):
            return typed_resume(interrupt_id, value, schema, response, locale)
        if is_human_input(value):
            return _picked(interrupt_id, value, response)
        return response.value
    actions = actions_of(value, schema)
    if kind == APPROVAL_RESPOND and response.response_kind != "declined":
        return respond_decisions(value, actions, response, locale)
    if kind == APPROVAL and response.response_kind != "declined":
        return approval_decisions(interrupt_id, value, actions, response, locale)
    if response.response_kind == "form" and response.values is not None:
        return edit_decisions(interrupt_id, value, actions, response.values, locale)
    # a Cancel turns the calls down; anything typed instead of Edit's form too, as the reason
    if response.response_kind == "declined":
        reason: str | None = catalog.text("approval_declined", locale)
    else:
        reason = response.value.strip() or None
    return declined_decisions(value, actions, reason, locale)


def _picked(interrupt_id: str, value: Any, response: HumanInputResponse) -> dict[str, Any]:
    """The answer's payload with the values the graph gave its options: the person sees an
    option's label (``{"label": "Production (EU)", "value": "prod-eu-1"}``), the graph gets its
    value as it wrote it (``False``, ``3``, a dict), for a picked option and for a form's select
    and multi-select fields (the request holds them as text, ``given_values``)."""
    payload = response.to_payload()
    request, given = normalize_with_given(dict(value), interrupt_id)
    if response.response_kind == "option" and response.option_id in given:
        payload["value"] = given[response.option_id]
    elif response.response_kind == "form" and response.values is not None:
        payload["values"] = as_given(request, response.values, given)
    return payload


def superseded_value(interrupt_id: str, value: Any, locale: Locale = "en", schema: Any = None) -> Any:
    """What ``Command(resume=...)`` carries for an interrupt the person did not answer: they
    wrote a new message instead.

    A HITL interrupt: a ``reject`` decision for each reviewed call, saying so (the tool is not
    run; ``respond`` with the same words where the review allows no ``reject``; ``NotApproved``
    with them where it allows neither: the calls are answered without resuming it);
    any other interrupt: what a declined answer with reason ``superseded`` resumes it with (the
    declined ``HumanInputResponse`` payload for a human_input request or a typed interrupt, else
    its text); ``Dismissed`` when the interrupt's ``response_schema`` does not take that payload
    (it is not resumed: the new message runs over it).
    """
    if is_hitl(value):
        message = catalog.text("approval_superseded", locale)
        return declined_decisions(value, actions_of(value, schema), message, locale)
    request = request_for(interrupt_id, value, locale, schema)
    declined = answer_declined(request, None, "superseded")
    return resume_value(INTERRUPT, interrupt_id, value, declined, locale, schema)


async def resume_checked(
    run: Callable[[Any], Awaitable[Any]], asked: Any, value: Any, response: HumanInputResponse, locale: Locale
) -> Any:
    """``run(Command(resume=…))``'s result for interrupt ``asked`` resumed with ``value`` (the
    answer ``response``'s); the question asked again (``AskAgain``) when ``value`` is one, or when
    the graph rejects the answer (``is_invalid_resume``: it did not match the interrupt's
    ``response_schema``). A declined answer the schema does not take (``value`` is ``Dismissed``:
    not run) or the graph rejects is never asked again: the question stays closed
    (``Dismissed``), as any dismissed question; the interrupt stays pending."""
    from langgraph.errors import is_invalid_resume
    from langgraph.types import Command

    if isinstance(value, AskAgain | Dismissed | NotApproved):  # nothing to resume it with
        return value
    try:
        return await run(Command(resume={asked.id: value}))
    except Exception as exc:
        if not is_invalid_resume(exc):
            raise
        if response.response_kind == "declined":
            log.info("interrupt %s refused the declined answer: the question is closed", asked.id)
            return Dismissed()
        schema = getattr(asked, "response_schema", None) or {}
        again = rejected_asked(asked.id, plain_value(asked.value), schema, value, str(exc), locale)
        return AskAgain(asked_again(again.request, response.request_id), again.in_full)
