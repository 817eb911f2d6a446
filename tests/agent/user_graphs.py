"""Graphs an operator might name in ``agent.graph`` (imported by path in the tests)."""

from __future__ import annotations

import dataclasses
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import interrupt
from pydantic import BaseModel

RAN: list[str] = []  # what the deploy step really did
ANSWERS: list[Any] = []  # what each interrupt() of these graphs was resumed with


def _ask_region(state: MessagesState) -> dict[str, Any]:
    answer = interrupt(
        {
            "question": "Which region?",
            "clarification_type": "approach_choice",
            "options": ["eu-west", "us-east"],
        }
    )
    ANSWERS.append(answer)
    region = answer.get("value") if isinstance(answer, dict) else str(answer)
    if isinstance(answer, dict) and answer.get("response_kind") == "declined":
        return {"messages": [AIMessage(content="Not deploying.")]}
    RAN.append(region)
    return {"messages": [AIMessage(content=f"Deployed to {region}.")]}


def _builder() -> StateGraph:
    builder = StateGraph(MessagesState)
    builder.add_node("ask_region", _ask_region)
    builder.add_edge(START, "ask_region")
    return builder


def make_graph(checkpointer: Any) -> Any:
    """A factory: takes the gateway's checkpointer."""
    return _builder().compile(checkpointer=checkpointer)


#: A compiled graph without a checkpointer: the gateway gives it its own.
compiled = _builder().compile()


def _plain(state: MessagesState) -> dict[str, Any]:
    return {"messages": [AIMessage(content=f"echo: {state['messages'][-1].text}")]}


_plain_builder = StateGraph(MessagesState)
_plain_builder.add_node("reply", _plain)
_plain_builder.add_edge(START, "reply")
#: A graph that never asks: a plain chat agent.
plain = _plain_builder.compile()


def _free(state: MessagesState) -> dict[str, Any]:
    answer = interrupt("Type the release name")
    ANSWERS.append(answer)
    return {"messages": [AIMessage(content=f"Release {answer}.")]}


_free_builder = StateGraph(MessagesState)
_free_builder.add_node("free", _free)
_free_builder.add_edge(START, "free")
#: A graph whose interrupt value is plain text.
free_text = _free_builder.compile()


#: Options given as objects: the person picks a label, the graph acts on the value behind it.
ENVIRONMENTS = [
    {"label": "Production (EU)", "value": "prod-eu-1"},
    {"label": "Staging", "value": "stage-2"},
]


def _ask_environment(state: MessagesState) -> dict[str, Any]:
    answer = interrupt({"question": "Which environment?", "options": ENVIRONMENTS})
    ANSWERS.append(answer)
    return {"messages": [AIMessage(content=f"Deploying to {answer['value']}.")]}


_environments_builder = StateGraph(MessagesState)
_environments_builder.add_node("ask_environment", _ask_environment)
_environments_builder.add_edge(START, "ask_environment")
#: A plain interrupt() whose options are ``{label, value}`` objects; says what it deploys to.
environments = _environments_builder.compile()


def delete_records(table: str, limit: int = 10) -> str:
    """Delete up to ``limit`` records from ``table``."""
    RAN.append(f"delete {table} {limit}")
    return f"deleted {limit} from {table}"


async def lookup(term: str) -> str:
    """Look ``term`` up."""
    return f"{term}: found"


def _metadata(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
    metadata = config.get("metadata") or {}
    seen = {k: metadata.get(k) for k in ("thread_id", "platform")}
    return {"messages": [AIMessage(content=f"{seen}")]}


_meta_builder = StateGraph(MessagesState)
_meta_builder.add_node("meta", _metadata)
_meta_builder.add_edge(START, "meta")
#: Replies with the tracing metadata its run was given.
metadata_echo = _meta_builder.compile()


def make_clarifying_agent(checkpointer: Any) -> Any:
    """The README's way (a): an own ``create_agent`` with clarigate's tool and middleware."""
    from langchain.agents import create_agent

    from clarigate.agent.middleware import ClarificationMiddleware
    from clarigate.agent.models.scripted import ScriptedChatModel, ScriptedTurn
    from clarigate.agent.tools import build_ask_clarification_tool

    ask = {"name": "ask_clarification", "args": {"question": "Which table?", "options": ["users", "orders"]}}
    model = ScriptedChatModel(
        turns=[
            ScriptedTurn.model_validate({"tool_calls": [ask]}),
            ScriptedTurn(content="Cleaning {last_user}"),
        ]
    )
    return create_agent(
        model,
        tools=[build_ask_clarification_tool(), delete_records],
        middleware=[ClarificationMiddleware()],
        checkpointer=checkpointer,
    )


APPROVE_OR_REJECT = ["approve", "reject"]


def make_hitl_agent(checkpointer: Any, mode: str = "batched") -> Any:
    """An operator's own ``create_agent`` on an OpenAI-compatible endpoint (``OPENAI_BASE_URL``),
    with ``delete_records`` behind LangChain's ``HumanInTheLoopMiddleware``; nothing of clarigate's."""
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware
    from langchain_openai import ChatOpenAI

    approval = {"delete_records": {"allowed_decisions": APPROVE_OR_REJECT}}
    return create_agent(
        model=ChatOpenAI(model="gpt-4.1-mini", max_retries=0),
        tools=[delete_records],
        middleware=[HumanInTheLoopMiddleware(approval, interrupt_mode=mode)],  # type: ignore[arg-type]
        checkpointer=checkpointer,
    )


def make_per_call_hitl_agent(checkpointer: Any) -> Any:
    """``make_hitl_agent`` with one interrupt per gated call (``interrupt_mode="per_call"``)."""
    return make_hitl_agent(checkpointer, "per_call")


def _trim_then_ask(state: MessagesState) -> dict[str, Any]:
    """Notes what it is told; hides a password (the person's message replaced by a redacted copy,
    a new message); asks which region before deploying, then drops all but the last two messages
    (a graph keeping its thread short) as it answers."""
    from langchain_core.messages import HumanMessage, RemoveMessage

    last = state["messages"][-1]
    if "password" in last.text:
        redacted = HumanMessage(content="[redacted]")
        return {
            "messages": [RemoveMessage(id=str(last.id)), redacted, AIMessage(content="I hid your password.")]
        }
    if "deploy" not in last.text:
        return {"messages": [AIMessage(content=f"noted: {last.text}")]}
    answer = interrupt({"question": "Which region?", "options": ["eu-west", "us-east"]})
    dropped = [RemoveMessage(id=m.id) for m in state["messages"][:-2] if m.id]
    return {"messages": [*dropped, AIMessage(content=f"Deploying to {answer['value']}.")]}


_trimming_builder = StateGraph(MessagesState)
_trimming_builder.add_node("reply", _trim_then_ask)
_trimming_builder.add_edge(START, "reply")
#: Shortens its thread in the turn: a fresh one (a password hidden) and one an answer resumes.
trimming = _trimming_builder.compile()


def _tidy(state: MessagesState) -> dict[str, Any]:
    from langchain_core.messages import RemoveMessage

    dropped = [RemoveMessage(id=m.id) for m in state["messages"][:-1] if m.id]
    return {"messages": [*dropped, AIMessage(content="Tidied up.")]}


_tidy_builder = StateGraph(MessagesState)
_tidy_builder.add_node("note", _plain)
_tidy_builder.add_node("tidy", _tidy)
_tidy_builder.add_conditional_edges(
    START, lambda state: "tidy" if "tidy" in state["messages"][-1].text else "note", ["note", "tidy"]
)
#: Echoes; "tidy" drops every earlier message, after a breakpoint (asked "Continue?") before it.
tidy_after_pause = _tidy_builder.compile(interrupt_before=["tidy"])


# --- values longer than a question holds, and options whose values are not text -----------------


def run_sql(query: str) -> str:
    """Run a read-only SQL query."""
    RAN.append(f"run_sql {query}")
    return "3 rows"


def drop_table(name: str) -> str:
    """Drop a table."""
    RAN.append(f"drop_table {name}")
    return f"dropped {name}"


def _single(node: Any) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("step", node)
    builder.add_edge(START, "step")
    return builder.compile()


#: What ``review`` asks a person to confirm (set a test's own before it runs, if it likes).
REVIEWED: dict[str, Any] = {"llm_output": "Refund 12,000 EUR to ACME Corp and close their account today."}


def _review(state: MessagesState) -> dict[str, Any]:
    answer = interrupt({"question": "Is this correct?", **REVIEWED})
    ANSWERS.append(answer)
    return {"messages": [AIMessage(content="Noted.")]}


#: LangGraph's "review" pattern: the question, and the output to review under keys of its own.
review = _single(_review)

PLAN = (
    "Here is the migration plan.\n"
    + "\n".join(f"Step {i}: migrate shard {i} to the new cluster." for i in range(1, 9))
    + "\nShall I start now, or wait for the weekend?"
)
#: What ``plan`` asks with (a test may set its own).
PLANNED: list[str] = [PLAN]


def _plan(state: MessagesState) -> dict[str, Any]:
    answer = interrupt(PLANNED[-1])
    ANSWERS.append(answer)
    return {"messages": [AIMessage(content=f"Plan answer: {answer}")]}


#: Asks with a plain string of several lines, the question its last line.
plan = _single(_plan)

SWITCHES = [{"label": "On", "value": True}, {"label": "Off", "value": False}]
SIZES = [{"label": "One replica", "value": 1}, {"label": "Three replicas", "value": 3}]


def _service(state: MessagesState) -> dict[str, Any]:
    cache = interrupt({"question": "Cache?", "options": SWITCHES})
    replicas = interrupt({"question": "How many replicas?", "options": SIZES})
    ANSWERS.append((cache["value"], replicas["value"]))
    return {"messages": [AIMessage(content=f"Cache {cache['value']!r}, replicas {replicas['value']!r}.")]}


#: Options whose values are a bool and a number, asked one after the other.
service = _single(_service)

REGIONS = [{"label": "EU", "value": {"region": "eu", "zone": 2}}, {"label": "US", "value": {"region": "us"}}]


def _service_form(state: MessagesState) -> dict[str, Any]:
    fields = [
        {"name": "cache", "type": "select", "options": SWITCHES, "required": True},
        {"name": "replicas", "type": "multi_select", "options": SIZES},
        {"name": "region", "type": "select", "options": REGIONS},
    ]
    answer = interrupt({"question": "Service settings?", "fields": fields})
    ANSWERS.append(answer["values"])
    return {"messages": [AIMessage(content="Configured.")]}


#: A form whose select and multi-select options have values of other types (a bool, numbers, dicts).
service_form = _single(_service_form)


def fetch_invoice(number: str) -> str:
    """Fetch invoice ``number`` from the billing system."""
    raise RuntimeError("the billing system answered 500")


def make_raising_tool_agent(checkpointer: Any) -> Any:
    """An operator's own ``create_agent`` on an OpenAI-compatible endpoint whose tool raises, with
    nothing of clarigate's: the failed run leaves the thread with a tool call and no result."""
    from langchain.agents import create_agent
    from langchain_openai import ChatOpenAI

    model = ChatOpenAI(model="gpt-4.1-mini", max_retries=0)
    return create_agent(model=model, tools=[fetch_invoice], checkpointer=checkpointer)


class RegionQuestion(BaseModel):
    """What ``region_model`` asks: a pydantic model, not a dict."""

    question: str
    options: list[str]


@dataclasses.dataclass
class SqlReview:
    """What ``sql_review`` asks: a dataclass, LangGraph's review pattern."""

    question: str
    llm_output: str


def _region_model(state: MessagesState) -> dict[str, Any]:
    answer = interrupt(RegionQuestion(question="Which region?", options=["eu-west", "us-east"]))
    ANSWERS.append(answer)
    return {"messages": [AIMessage(content=f"Deployed to {answer['value']}.")]}


def _sql_review(state: MessagesState) -> dict[str, Any]:
    answer = interrupt(SqlReview(question="Is this SQL OK?", llm_output="DELETE FROM users WHERE id = 7"))
    ANSWERS.append(answer)
    return {"messages": [AIMessage(content=f"Review: {answer['value']}")]}


#: Asks with a pydantic model / a dataclass as the interrupt's value.
region_model = _single(_region_model)
sql_review = _single(_sql_review)
