"""A graph in this process paused on a static breakpoint: asked as "Continue / Stop", and the
answer applied (``clarigate.agent.breakpoints`` has the question and the rules)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from clarigate.agent.breakpoints import (
    DROPPED_AS,
    breakpoint_request,
    goes_on,
    paused_at,
    stopped_from,
    stopped_reply,
)
from clarigate.agent.models.conversation import thread_locale
from clarigate.agent.protocol import HumanInputRequest, HumanInputResponse, render_text_fallback

if TYPE_CHECKING:
    from clarigate.agent.harness import TurnOutput


def has_breakpoints(graph: Any) -> bool:
    """True when the compiled graph, or a subgraph it runs as a step (at any depth), stops before
    or after some of its steps: a subgraph compiled with ``interrupt_before`` / ``interrupt_after``
    pauses the thread as the parent's do (the parent waits on the step that runs it)."""
    subgraphs = getattr(graph, "get_subgraphs", None)
    graphs = [graph, *(sub for _, sub in subgraphs(recurse=True))] if subgraphs else [graph]
    return any(
        getattr(g, "interrupt_before_nodes", None) or getattr(g, "interrupt_after_nodes", None)
        for g in graphs
    )


def _messages(snapshot: Any) -> list[Any]:
    values = getattr(snapshot, "values", None)
    return list(values.get("messages", [])) if isinstance(values, Mapping) else []


def waiting_to_go_on(graph: Any, snapshot: Any) -> HumanInputRequest | None:
    """The "Continue / Stop" of a thread (its ``snapshot``) paused on a breakpoint of ``graph``."""
    if not has_breakpoints(graph) or not paused_at(snapshot.next, getattr(snapshot, "interrupts", ())):
        return None
    checkpoint_id = str(snapshot.config["configurable"]["checkpoint_id"])
    return breakpoint_request(checkpoint_id, list(snapshot.next), thread_locale(_messages(snapshot)))


async def asking_to_go_on(graph: Any, config: dict[str, Any], output: TurnOutput) -> TurnOutput:
    """``output`` asking "Continue / Stop" when the run ended paused on a breakpoint."""
    from clarigate.agent.harness import TurnOutput

    if output.request is not None or not has_breakpoints(graph):
        return output
    request = waiting_to_go_on(graph, await graph.aget_state(config))
    if request is None:
        return output
    fallback = render_text_fallback(request)
    return TurnOutput(replies=output.replies, request=request, fallback_text=fallback, limit=output.limit)


async def abandon(graph: Any, config: dict[str, Any]) -> None:
    """Drop the steps the thread of ``config`` is paused before: LangGraph's update with no
    values as ``END`` clears the pending tasks, so the thread no longer waits (its messages kept;
    the checkpoint it stopped at stays until the next run prunes: ``stopped_again`` reads it)."""
    side = {key: value for key, value in config.items() if key != "run_id"}  # not the turn's run
    await graph.aupdate_state(side, None, as_node=DROPPED_AS)


async def stopped_again(graph: Any, snapshot: Any, checkpoint_id: str) -> TurnOutput | None:
    """The *Stop* reply again when ``snapshot`` is the checkpoint a *Stop* at ``checkpoint_id``
    made (``stopped_from``); None otherwise."""
    from clarigate.agent.harness import TurnOutput

    parent = getattr(snapshot, "parent_config", None) or {}
    parent_id = parent.get("configurable", {}).get("checkpoint_id")
    source = (getattr(snapshot, "metadata", None) or {}).get("source")
    if not stopped_from(checkpoint_id, parent_id, source, snapshot.next):
        return None
    paused = await graph.aget_state(parent)
    return TurnOutput(replies=[stopped_reply(list(paused.next), thread_locale(_messages(paused)))])


async def answer_breakpoint(
    graph: Any,
    config: dict[str, Any],
    checkpoint_id: str,
    response: HumanInputResponse,
    go_on: Callable[[Sequence[Any]], Awaitable[TurnOutput]],
) -> TurnOutput | None:
    """The answer to a breakpoint question: *Continue* runs ``go_on(messages before)`` (the graph
    goes on from where it stopped), *Stop* drops the steps that wait (``abandon``) and says so.
    None when the graph is no longer paused at that checkpoint (the answer is then a new message)."""
    from clarigate.agent.harness import TurnOutput

    snapshot = await graph.aget_state(config)
    at = (getattr(snapshot, "config", None) or {}).get("configurable", {}).get("checkpoint_id")
    if str(at) != checkpoint_id or not paused_at(snapshot.next, getattr(snapshot, "interrupts", ())):
        return None if goes_on(response) else await stopped_again(graph, snapshot, checkpoint_id)
    before = _messages(snapshot)
    if not goes_on(response):
        await abandon(graph, config)
        return TurnOutput(replies=[stopped_reply(list(snapshot.next), thread_locale(before))])
    return await go_on(before)
