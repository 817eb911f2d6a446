"""The built-in agent as a graph a LangGraph server can serve (``deploy/langgraph/langgraph.json``).

``graph`` is a graph factory: the server calls it for each run with the run's config. The
gateway sends its ``agent:`` settings in the run's ``configurable`` (which the server copies
into the run's context, with who is talking: ``clarigate.agent.who``) with every run
(key ``clarigate_agent``, ``clarigate.agent.placement``): the model's id, the clarification
switches, the instructions' text, the approvals and the limits, so a bot moved to a server
keeps them. What a run does not send comes from the server's own environment: ``LLM_MODEL``
(default: the offline demo model), ``ALLOW_CLARIFICATION``, ``DISABLE_CLARIFICATION`` and
``CLARIGATE_AGENT__<SETTING>`` (``CLARIGATE_AGENT__TOOLS='["pkg.mod:tool"]'``: tools are
imported from the server's environment only, never from what a run sends). The graph declares
that context (its context schema names ``clarigate_agent``), which is how the gateway tells it
from another graph. The server keeps threads and checkpoints itself, so no checkpointer here.
One graph is built per distinct set of settings and reused.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Mapping
from typing import Any

from pydantic_settings import BaseSettings, SettingsConfigDict
from typing_extensions import TypedDict

from clarigate.agent.placement import SETTINGS_KEY, TRAVELLING
from clarigate.agent.settings import AgentOptions, AgentSettings
from clarigate.agent.who import Speaker

log = logging.getLogger(__name__)


class ClarigateContext(TypedDict, total=False):
    """The run context the shipped server graph reads: the gateway's ``agent:`` settings, and
    who is talking (``clarigate.agent.who``)."""

    clarigate_agent: dict[str, Any]
    clarigate: Speaker


assert SETTINGS_KEY in ClarigateContext.__annotations__


class ServerEnvOptions(AgentOptions, BaseSettings):
    """``CLARIGATE_AGENT__<SETTING>`` in the server's environment."""

    model_config = SettingsConfigDict(env_prefix="CLARIGATE_AGENT__", extra="ignore")


@functools.cache
def environment_options() -> dict[str, Any]:
    """The settings the server's environment sets (read once)."""
    from clarigate.agent.loading import load_instructions
    from clarigate.agent.placement import set_settings

    values = set_settings(ServerEnvOptions())
    well_known = set_settings(AgentSettings.from_env())
    values.update({k: v for k, v in well_known.items() if k in AgentOptions.model_fields})
    if values.get("instructions"):
        values["instructions"] = load_instructions(values["instructions"])
    return values


def run_options(config: Mapping[str, Any] | None) -> AgentOptions:
    """The environment's settings with what the run sent on top (only the settings that travel)."""
    configurable = (config or {}).get("configurable") or {}
    sent = configurable.get(SETTINGS_KEY) or {}
    if not isinstance(sent, Mapping):
        raise ValueError(f"{SETTINGS_KEY} in the run's context is not a mapping")
    ignored = sorted(k for k in sent if k not in TRAVELLING)
    if ignored:
        log.warning("%s: ignoring settings a run cannot send: %s", SETTINGS_KEY, ", ".join(ignored))
    values = {**environment_options(), **{k: v for k, v in sent.items() if k in TRAVELLING}}
    return AgentOptions.model_validate(values)


@functools.lru_cache(maxsize=32)
def _built(options_json: str) -> Any:
    from clarigate.agent.assembly import built_in_graph
    from clarigate.agent.loading import load_tools
    from clarigate.agent.models import build_chat_model

    options = AgentOptions.model_validate_json(options_json)
    if options.mcp_servers:
        log.warning("the server graph starts no MCP servers: mcp_servers is not used")
    return built_in_graph(
        options,
        build_chat_model(options.model),
        load_tools(options.tools),
        None,
        options.instructions or "",  # text by now: a file was read from the server's environment
        context_schema=ClarigateContext,
    )


#: For reading a thread (its state, its pending interrupt) the server builds the graph without the
#: run's settings: it gets every node any settings could add, so a pending approval or limit step
#: of any run is found (nodes run only when a run executes them, with that run's settings).
EVERY_NODE = {
    "allow_clarification": True,
    "disable_clarification": False,
    "require_approval": {"*": None},
    "max_model_calls": 1,
    "max_tool_calls": 1,
    "summarize_after_tokens": 1000,
}


def graph(config: Any) -> Any:
    """The graph factory LangGraph's server calls per run (and to read a thread or the schemas)."""
    configurable = (config or {}).get("configurable") or {}
    options = run_options(config)
    if SETTINGS_KEY not in configurable and configurable.get("__is_for_execution__") is False:
        options = options.model_copy(update=EVERY_NODE)
    return _built(json.dumps(options.model_dump(mode="json"), sort_keys=True))
