"""A run the LangGraph server lost while its graph was paused on a static breakpoint: the person is
asked "Continue / Stop" exactly as after a run that ended there, and the step behind the
breakpoint runs only once they say Continue (never on its own when the runner recovers the turn).

Besides the breakpoints compiled into the graph (one naming a subgraph's step among them): one a
run was given (``interrupt_before=`` of ``runs.create``, as LangGraph Studio may start one on the
thread), and one compiled into a subgraph, before or after a step of its own (the parent waits on
the step that runs it); Continue goes on from the parent's checkpoint, which resumes the
subgraph.

The lost run is what ``test_server_crash`` makes of one: the turn's human message and the steps
it ran are in the thread, paused at the breakpoint, and no run carries the turn's inbound id.
A run cut off mid-step still goes on from its checkpoint (``test_server_crash``)."""

from __future__ import annotations

import pytest
from langgraph_sdk import get_client

from clarigate.agent.settings import AgentOptions
from clarigate.gateway.boundary.messages import AnswerStatus
from clarigate.gateway.runners.server import LangGraphServerRunner, server_thread_id
from clarigate.gateway.store.memory import MemoryStore

from ..langgraph_server.process import LangGraphServer
from .test_breakpoints import DONE, PLAN, QUESTION
from .test_server_crash import lost_run_of


def _applied(server: LangGraphServer, sid: str) -> int:
    """How many times the ``apply`` step (the side effect behind the breakpoint) ran for ``sid``."""
    return server.tool_calls().count(f"apply {sid}")


#: The graph, the breakpoints its run was given, and the step the thread waits on.
PAUSES = {
    "pause_before": ("pause_before", {}, "apply"),
    "pause_after": ("pause_after", {}, "apply"),
    "run_before": ("two_steps", {"interrupt_before": ["apply"]}, "apply"),
    "run_after": ("two_steps", {"interrupt_after": ["plan"]}, "apply"),
    "subgraph": ("pause_in_subgraph", {}, "cleanup"),
    "subgraph_after": ("pause_after_in_subgraph", {}, "cleanup"),
    "before_subgraph": ("pause_before_subgraph", {}, "cleanup"),
    "subgraph_end": ("pause_at_subgraph_end", {}, "cleanup"),
}


@pytest.mark.parametrize("pause", list(PAUSES))
async def test_a_run_lost_at_a_breakpoint_asks_and_runs_the_step_only_on_continue(
    make_gateway, langgraph_server: LangGraphServer, pause: str
):
    graph, stop, waits = PAUSES[pause]
    runner = LangGraphServerRunner(AgentOptions(server_url=langgraph_server.url, assistant_id=graph))
    client = get_client(url=langgraph_server.url, api_key=None)
    store = MemoryStore(f"lost-bp-{pause}")
    try:
        gateway, chat = await make_gateway(store, runner)
        chat_id, event_id = f"lost-{pause}", f"lost-bp-{pause}"
        thread_id = await store.thread_for_chat(chat.conversation(chat_id).thread_key, 3600)
        sid = server_thread_id(thread_id)
        # the turn's run reached the breakpoint, then the server lost it
        await lost_run_of(langgraph_server, thread_id, f"test:{event_id}", graph, **stop)
        assert (await client.threads.get_state(sid))["next"] == [waits]

        await chat.say("clean up staging", chat=chat_id, event_id=event_id)  # delivered again
        await gateway.drain(timeout=60)
        assert _applied(langgraph_server, sid) == 0  # nothing went on by itself
        waiting = await runner.pending_request(thread_id)  # what ``clarigate chat`` shows again
        assert waiting is not None and waiting.request_id == chat.last_request().request.request_id
        request = chat.last_request().request
        # asked, as after a run that ended at the breakpoint
        assert request.question == QUESTION.replace("apply", waits)
        assert [o.label for o in request.options] == ["Continue", "Stop"]
        assert chat.texts() == [PLAN]

        outcome = await chat.click([o.label for o in request.options].index("Continue"))
        assert outcome.status is AnswerStatus.ACCEPTED
        await gateway.drain(timeout=60)
        assert chat.texts() == [PLAN, DONE]
        assert _applied(langgraph_server, sid) == 1  # Continue ran it, once
        assert await runner.pending_request(thread_id) is None
    finally:
        await client.http.client.aclose()
        await runner.aclose()
