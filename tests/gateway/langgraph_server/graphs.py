"""Graphs the test LangGraph server serves: built on clarigate's harness with the scripted model.

The server process reads the scripts and the tool's log file from the environment the test
fixture gives it (``ASKER_SCRIPT``, ``APPROVER_SCRIPT``, ``WRITER_SCRIPT``, ``TOOL_LOG``), and
the OpenAI-compatible stub an operator's own graph talks to (``OPENAI_STUB_URL``).
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import interrupt

from clarigate.agent.graph import build_agent_graph
from clarigate.agent.models import build_chat_model


@tool
def delete_data(target: str) -> str:
    """Delete the named data set."""
    with Path(os.environ["TOOL_LOG"]).open("a", encoding="utf-8") as log:
        log.write(f"delete_data {target}\n")
    return f"deleted {target}"


#: Asks with ask_clarification, then answers.
asker = build_agent_graph(build_chat_model(f"scripted:{os.environ['ASKER_SCRIPT']}"))

#: Calls delete_data, which needs a person's approval first (HumanInTheLoopMiddleware).
approver = build_agent_graph(
    build_chat_model(f"scripted:{os.environ['APPROVER_SCRIPT']}"),
    tools=[delete_data],
    require_approval={"delete_data": ["approve", "reject"]},
)


@tool
async def search_docs(query: str) -> str:
    """Searching the docs."""
    await asyncio.sleep(0.3)  # long enough for its progress line to be shown
    return f"the guide on {query}"


#: Searches, then streams its answer word by word.
writer = build_agent_graph(build_chat_model(f"scripted:{os.environ['WRITER_SCRIPT']}"), tools=[search_docs])


def _ask(state: MessagesState) -> dict[str, Any]:
    answer = interrupt(
        {
            "kind": "human_input_request",
            "question": "Which region should I deploy to?",
            "clarification_type": "approach_choice",
            "options": ["eu-west", "us-east"],
        }
    )
    value = answer.get("value") if isinstance(answer, dict) else answer
    return {"messages": [{"role": "assistant", "content": f"Deploying to {value}."}]}


#: A plain graph that asks with LangGraph's interrupt() in the protocol's shape.
interrupter = (
    StateGraph(MessagesState).add_node("ask", _ask).add_edge(START, "ask").add_edge("ask", END).compile()
)


async def _nap(state: MessagesState) -> dict[str, Any]:
    await asyncio.sleep(float(os.environ.get("NAP_SECONDS", "3")))
    return {"messages": [{"role": "assistant", "content": "Rested."}]}


#: A run that takes a few seconds (long enough to stop the server in the middle of it).
sleeper = (
    StateGraph(MessagesState).add_node("nap", _nap).add_edge(START, "nap").add_edge("nap", END).compile()
)


def _stub_model() -> Any:
    from langchain_openai import ChatOpenAI

    url = os.environ["OPENAI_STUB_URL"]
    # the stub answers whole completions only (no SSE): the model does not stream
    return ChatOpenAI(
        model="gpt-4.1-mini", base_url=url, api_key="sk-test-not-a-key", max_retries=0, disable_streaming=True
    )  # type: ignore[arg-type]


def _hitl_user(allowed: list[str]) -> Any:
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware

    approval = {"delete_data": {"allowed_decisions": allowed}}
    return create_agent(
        model=_stub_model(), tools=[delete_data], middleware=[HumanInTheLoopMiddleware(approval)]
    )


def fetch_invoice(number: str) -> str:
    """Fetch invoice ``number`` from the billing system."""
    raise RuntimeError("the billing system answered 500")


def _raising_tool_user() -> Any:
    from langchain.agents import create_agent

    return create_agent(model=_stub_model(), tools=[fetch_invoice])


#: clarigate's own agent on the OpenAI-compatible stub (its replies are the test's).
stub_agent = build_agent_graph(_stub_model())

#: An operator's own graph: create_agent + LangChain's HITL middleware on an OpenAI-compatible model.
hitl_user = _hitl_user(["approve", "reject"])
#: An operator's own create_agent whose tool raises, nothing of clarigate's: its failed run leaves
#: the thread with a tool call and no result.
raising_tool_user = _raising_tool_user()
#: The same, its review allowing approve and edit only: no decision turns the call down.
hitl_approve_or_edit = _hitl_user(["approve", "edit"])


def _echo_answer(state: MessagesState) -> dict[str, Any]:
    answer = interrupt({"question": "Which release?", "options": ["v1", "v2"]})
    return {"messages": [{"role": "assistant", "content": "resumed with " + json.dumps(answer)}]}


#: A plain interrupt() graph that says what it was resumed with.
answer_echo = (
    StateGraph(MessagesState)
    .add_node("ask", _echo_answer)
    .add_edge(START, "ask")
    .add_edge("ask", END)
    .compile()
)
