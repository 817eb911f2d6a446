"""A graph paused on a static breakpoint (``interrupt_before`` / ``interrupt_after``), asked as
"Continue / Stop", and a graph the gateway cannot run (no ``messages`` in its state, or one
without a reducer).

A breakpoint stops the run with the graph's next steps pending and no ``interrupt()`` value to
show: LangGraph leaves it to the client to go on. The person gets a question naming the step
that waits: *Continue* goes on from there (a run without input), *Stop* drops the steps that
wait (the state updated with no values as ``END``, LangGraph's way to clear a thread's pending
tasks), so the thread no longer waits and the question is not asked again; a new message starts
the graph afresh on the same thread, its history kept. The request id is
``breakpoint:<checkpoint id>``: an answer goes on only from the checkpoint it was asked at, so a
stale click never runs a step the graph has moved past.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from clarigate.agent.protocol import HumanInputRequest, HumanInputResponse, catalog, normalize_request
from clarigate.agent.protocol.models import Locale

BREAKPOINT = "breakpoint"
#: The node a state update with no values is made as to drop a paused thread's pending steps
#: (LangGraph's ``END``, spelled out so the server runner needs no LangGraph import).
DROPPED_AS = "__end__"
#: The state key the gateway writes the person's message to and reads the replies from.
MESSAGES_KEY = "messages"
#: How LangGraph's own channels of a compiled graph begin, beside the state's keys: ``__start__``,
#: ``branch:to:<node>`` (a node's trigger), ``join:<a>+<b>:<node>`` (an edge from several nodes).
_INTERNAL_CHANNELS = ("__", "branch:", "join:")


def breakpoint_request(checkpoint_id: str, steps: Sequence[str], locale: Locale) -> HumanInputRequest:
    """Continue / Stop for a graph paused before ``steps`` at ``checkpoint_id``."""
    names = ", ".join(f"“{step}”" for step in steps) or "?"
    args = {
        "question": catalog.text("breakpoint_question", locale, steps=names),
        "clarification_type": "approach_choice",
        "options": [catalog.text("continue", locale), catalog.text("stop", locale)],
    }
    request = normalize_request(args, tool_call_id=checkpoint_id)
    return request.model_copy(
        update={"request_id": f"{BREAKPOINT}:{checkpoint_id}", "source": BREAKPOINT, "locale": locale}
    )


def breakpoint_of(request_id: str) -> str | None:
    """The checkpoint id a breakpoint question was asked at; None for any other request."""
    prefix = BREAKPOINT + ":"
    return request_id[len(prefix) :] if request_id.startswith(prefix) else None


def goes_on(response: HumanInputResponse) -> bool:
    """True when the answer is *Continue* (clicked or typed, in any language); anything else,
    a Cancel included, stops."""
    if response.response_kind not in ("option", "text"):
        return False
    return response.value.strip().casefold() in {w.casefold() for w in catalog.every("continue")}


def stopped_reply(steps: Sequence[str], locale: Locale) -> str:
    """What the person reads after *Stop*."""
    return catalog.text("breakpoint_stopped", locale, steps=", ".join(f"“{s}”" for s in steps) or "?")


def stopped_from(checkpoint_id: str, parent_id: Any, source: Any, next_steps: Sequence[str] | None) -> bool:
    """True when the thread's latest checkpoint (its ``parent_id``, ``source`` and ``next_steps``)
    is the one *Stop* made at ``checkpoint_id``: the same answer again (its turn run once more,
    the gateway's job having changed hands) is told it stopped, not taken as a new message."""
    return str(parent_id) == checkpoint_id and source == "update" and not next_steps


def paused_at(next_steps: Sequence[str] | None, interrupts: Sequence[Any] | None) -> bool:
    """True when a run that ended left steps pending with no interrupt to answer: a breakpoint."""
    return bool(next_steps) and not interrupts


def missing_messages(channels: Mapping[str, Any] | Sequence[str], what: str) -> str | None:
    """Why the graph ``what`` cannot be run, when its state (``channels``: its keys, or its
    channels by key, LangGraph's own left out of what it names) has no ``messages`` key, or one
    without a reducer (every write would replace the thread with the person's message); None
    when it has one the gateway can use."""
    if MESSAGES_KEY in channels:
        channel = channels[MESSAGES_KEY] if isinstance(channels, Mapping) else None
        if channel is None or not _replaced_by_writes(channel):
            return None
        return (
            f"{what}'s state key 'messages' has no reducer, so each message would replace the "
            "thread; declare it as messages: Annotated[list[AnyMessage], add_messages] (or use MessagesState)"
        )
    keys = ", ".join(sorted(k for k in channels if not str(k).startswith(_INTERNAL_CHANNELS))) or "none"
    return (
        f"{what}'s state has no 'messages' key (its keys: {keys}): clarigate sends the person's "
        "message as {'messages': [a human message]} and reads the replies from state['messages']; "
        "give the graph's state a messages key (MessagesState, or messages: Annotated[list, add_messages])"
    )


def _replaced_by_writes(channel: Any) -> bool:
    """True for a compiled graph's channel that keeps only the last value written to it (a state
    key declared without a reducer); False for anything else, a server's schema of it included."""
    if isinstance(channel, Mapping):
        return False  # a JSON schema (a LangGraph server's): it does not tell
    from langgraph.channels.last_value import LastValue

    return isinstance(channel, LastValue)
