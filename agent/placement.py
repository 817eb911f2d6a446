"""Which ``agent:`` settings apply to which agent, in one table, and the line that says why not.

An agent runs in one of four places: the built-in agent in this process, the operator's own
graph in this process (``agent.graph``), the shipped server graph on a LangGraph server
(``agent.server_url``, ``clarigate.agent.server_graph``) or another graph on such a server.
A setting that does not apply where the agent runs is never dropped silently: ``serve``,
``chat`` and ``doctor`` stop on it with one line naming it and what to do. A setting at its
default is not set.

What travels to the shipped server graph with every run (the run's ``configurable``, which
the server copies into its context; key ``SETTINGS_KEY``) is plain data: the model's id, the
switches, the instructions' text, the approvals and the limits. Settings that name code or
start processes (``tools``, ``mcp_servers``, ``graph``) and the checkpointer never travel: a
server imports, starts and keeps only what its own deployment says (``CLARIGATE_AGENT__TOOLS``
in the server's environment for the shipped graph). The gateway applies ``max_image_bytes`` itself (it fetches
the images) and sends ``recursion_limit`` as the run's config, so both apply everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from clarigate.agent.settings import AgentOptions

#: The run context key (and context schema field) under which the shipped server graph reads
#: the gateway's ``agent:`` settings.
SETTINGS_KEY = "clarigate_agent"


class Place(Enum):
    """Where the agent runs."""

    BUILT_IN = "the built-in agent"
    GRAPH = "agent.graph"
    SERVER = "the shipped server graph"
    OTHER_SERVER = "another graph on the LangGraph server"


EVERYWHERE = frozenset(Place)
IN_PROCESS = frozenset({Place.BUILT_IN, Place.GRAPH})
BUILT_IN_AGENT = frozenset({Place.BUILT_IN, Place.SERVER})


@dataclass(frozen=True)
class Rule:
    """Where one setting applies, and the advice for each place it does not."""

    applies: frozenset[Place]
    advice: Mapping[Place, str] = field(default_factory=dict)
    travels: bool = False  # sent to the shipped server graph with every run


def _middleware(name: str, setting: str) -> dict[Place, str]:
    return {
        Place.GRAPH: f"add {name} to your graph, or remove {setting}",
        Place.OTHER_SERVER: f"add {name} to the server's graph, or remove {setting}",
    }


_KEEPS_CHECKPOINTS = (
    "the LangGraph server keeps its own checkpoints: remove checkpointer_url (CHECKPOINTER_URL)"
)
_CLARIFY = {
    Place.GRAPH: "the clarify-first phase is the built-in agent's: remove {s}",
    Place.OTHER_SERVER: "the clarify-first phase is the built-in agent's: remove {s}",
}

#: setting -> where it applies. Every field of ``AgentOptions`` has a row (a test checks).
RULES: dict[str, Rule] = {
    "model": Rule(
        BUILT_IN_AGENT,
        {
            Place.GRAPH: "your graph brings its own model: remove model (LLM_MODEL)",
            Place.OTHER_SERVER: "the server's graph brings its own model: remove model (LLM_MODEL)",
        },
        travels=True,
    ),
    "checkpointer_url": Rule(
        IN_PROCESS, {Place.SERVER: _KEEPS_CHECKPOINTS, Place.OTHER_SERVER: _KEEPS_CHECKPOINTS}
    ),
    "allow_clarification": Rule(
        BUILT_IN_AGENT, {p: a.format(s="allow_clarification") for p, a in _CLARIFY.items()}, travels=True
    ),
    "disable_clarification": Rule(
        BUILT_IN_AGENT, {p: a.format(s="disable_clarification") for p, a in _CLARIFY.items()}, travels=True
    ),
    "instructions": Rule(
        BUILT_IN_AGENT,
        {
            Place.GRAPH: "your graph has its own prompt: put them there, or remove instructions",
            Place.OTHER_SERVER: "the server's graph has its own prompt: put them there, "
            "or remove instructions",
        },
        travels=True,
    ),
    "tools": Rule(
        frozenset({Place.BUILT_IN}),
        {
            Place.GRAPH: "give the tools to your graph, or remove tools",
            Place.SERVER: "tools load where the agent runs: set CLARIGATE_AGENT__TOOLS in the "
            "LangGraph server's environment, or remove tools",
            Place.OTHER_SERVER: "give the tools to the server's graph, or remove tools",
        },
    ),
    "mcp_servers": Rule(
        frozenset({Place.BUILT_IN}),
        {
            Place.GRAPH: "give your graph the MCP tools (langchain-mcp-adapters), or remove mcp_servers",
            Place.SERVER: "the gateway starts no MCP server for a LangGraph server: give the server's "
            "graph the MCP tools, or remove mcp_servers",
            Place.OTHER_SERVER: "give the server's graph the MCP tools, or remove mcp_servers",
        },
    ),
    "graph": Rule(
        IN_PROCESS,
        {
            Place.SERVER: "the LangGraph server runs its assistant's graph: remove graph or server_url",
            Place.OTHER_SERVER: "the LangGraph server runs its assistant's graph: remove graph or server_url",
        },
    ),
    "require_approval": Rule(
        BUILT_IN_AGENT, _middleware("HumanInTheLoopMiddleware", "require_approval"), travels=True
    ),
    "max_model_calls": Rule(
        BUILT_IN_AGENT, _middleware("ModelCallLimitMiddleware", "max_model_calls"), travels=True
    ),
    "max_tool_calls": Rule(
        BUILT_IN_AGENT, _middleware("ToolCallLimitMiddleware", "max_tool_calls"), travels=True
    ),
    "recursion_limit": Rule(EVERYWHERE),  # the run's config, in process and on the server
    "summarize_after_tokens": Rule(
        BUILT_IN_AGENT, _middleware("SummarizationMiddleware", "summarize_after_tokens"), travels=True
    ),
    "idempotent_tools": Rule(
        IN_PROCESS,
        {
            p: "a LangGraph server runs its own tools again after a crash; the gateway only joins "
            "its run: remove idempotent_tools"
            for p in (Place.SERVER, Place.OTHER_SERVER)
        },
    ),
    "max_image_bytes": Rule(EVERYWHERE),  # the gateway fetches the images
    "server_url": Rule(EVERYWHERE),  # chooses where the agent runs
    "assistant_id": Rule(
        frozenset({Place.SERVER, Place.OTHER_SERVER}),
        {
            p: "it names an assistant on a LangGraph server: set server_url (LANGGRAPH_URL), "
            "or remove assistant_id"
            for p in IN_PROCESS
        },
    ),
}

#: The settings the shipped server graph reads from each run.
TRAVELLING = tuple(name for name, rule in RULES.items() if rule.travels)


def place_of(options: AgentOptions, *, shipped: bool | None = None) -> Place | None:
    """Where ``options`` make the agent run; None for a server whose graph is not known yet."""
    if options.server_url:
        return None if shipped is None else Place.SERVER if shipped else Place.OTHER_SERVER
    return Place.GRAPH if options.graph else Place.BUILT_IN


def set_settings(options: AgentOptions) -> dict[str, Any]:
    """The settings that are not at their default (what an operator set)."""
    values = {}
    for name, info in type(options).model_fields.items():
        if name in RULES:
            value = getattr(options, name)
            if value != info.get_default(call_default_factory=True):
                values[name] = value
    return values


def problems(options: AgentOptions, place: Place | None) -> list[str]:
    """One line per set setting that does not apply at ``place``.

    ``place`` None (a server whose graph is not known yet): the settings that apply to no
    server graph at all.
    """
    lines = []
    for name in set_settings(options):
        rule = RULES[name]
        if place is None:
            if not rule.applies & {Place.SERVER, Place.OTHER_SERVER}:
                lines.append(_line(name, Place.SERVER, rule, options))
        elif place not in rule.applies:
            lines.append(_line(name, place, rule, options))
    return lines


def _line(name: str, place: Place, rule: Rule, options: AgentOptions) -> str:
    if place is Place.SERVER:
        where = "agent.server_url"
    elif place is Place.OTHER_SERVER:
        where = f"assistant {options.assistant_id!r} on agent.server_url (not clarigate's server graph)"
    else:
        where = place.value
    return f"agent.{name} does not apply to {where}: {rule.advice[place]}"


class SettingsDoNotApply(ValueError):
    """Set settings that do not apply where the agent runs (each line names one)."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("; ".join(lines))
        self.lines = lines


def check(options: AgentOptions, place: Place | None) -> None:
    """Raise ``SettingsDoNotApply`` when a set setting does not apply at ``place``."""
    lines = problems(options, place)
    if lines:
        raise SettingsDoNotApply(lines)


def travelling(options: AgentOptions) -> dict[str, Any]:
    """What the gateway sends the shipped server graph with every run: the set travelling
    settings, the instructions as their text (a file is read here)."""
    from clarigate.agent.loading import load_instructions

    values = {k: v for k, v in set_settings(options).items() if k in TRAVELLING}
    if "instructions" in values:
        values["instructions"] = load_instructions(values["instructions"])
    return values
