"""Where each agent setting applies, written out by hand, and a value that sets each one.

The places: the built-in agent, a user graph (``agent.graph``), clarigate's server graph on a
LangGraph server (``LANGGRAPH_URL``, assistant ``agent``) and another graph on one.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

BUILT_IN, GRAPH, SERVER, OTHER = "built-in", "graph", "server", "other"

#: setting -> the places it applies to (``server_url`` chooses the place and is left out)
APPLIES: dict[str, set[str]] = {
    "model": {BUILT_IN, SERVER},
    "checkpointer_url": {BUILT_IN, GRAPH},
    "allow_clarification": {BUILT_IN, SERVER},
    "disable_clarification": {BUILT_IN, SERVER},
    "instructions": {BUILT_IN, SERVER},
    "tools": {BUILT_IN},
    "mcp_servers": {BUILT_IN},
    "graph": {GRAPH},
    "require_approval": {BUILT_IN, SERVER},
    "max_model_calls": {BUILT_IN, SERVER},
    "max_tool_calls": {BUILT_IN, SERVER},
    "recursion_limit": {BUILT_IN, GRAPH, SERVER, OTHER},
    "summarize_after_tokens": {BUILT_IN, SERVER},
    "idempotent_tools": {BUILT_IN, GRAPH},
    "max_image_bytes": {BUILT_IN, GRAPH, SERVER, OTHER},
    "assistant_id": {SERVER, OTHER},
}

WHERE = {
    BUILT_IN: "the built-in agent",
    GRAPH: "agent.graph",
    SERVER: "agent.server_url",
    OTHER: "assistant 'asker' on agent.server_url (not clarigate's server graph)",
}

MCP_SERVER = Path(__file__).parents[2] / "agent" / "mcp_notes_server.py"


def setting_env(name: str, tmp_path: Path, place: str | None = None) -> dict[str, str]:
    """The environment that sets ``name`` to a value other than its default (at the built-in
    agent, a setting naming a tool comes with that tool: a name of no tool stops the start)."""
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump([{"content": "hello"}]))
    mcp = {
        "notes": {
            "transport": "stdio",
            "command": sys.executable,
            "args": [str(MCP_SERVER), str(tmp_path / "n")],
        }
    }
    values = {
        "model": f"scripted:{script}",
        "checkpointer_url": "memory://",
        "allow_clarification": "true",
        "disable_clarification": "true",
        "instructions": "Answer in French.",
        "tools": '["tests.agent.user_graphs:lookup"]',
        "mcp_servers": json.dumps(mcp),
        "graph": "tests.agent.user_graphs:plain",
        "require_approval": '["lookup"]',
        "max_model_calls": "5",
        "max_tool_calls": "5",
        "recursion_limit": "60",
        "summarize_after_tokens": "5000",
        "idempotent_tools": '["lookup"]',
        "max_image_bytes": "1000",
        "assistant_id": "elsewhere",
    }
    names_a_tool = place == BUILT_IN and name in ("require_approval", "idempotent_tools")
    tool = {"CLARIGATE_AGENT__TOOLS": values["tools"]} if names_a_tool else {}
    return {f"CLARIGATE_AGENT__{name.upper()}": values[name], **tool}


def place_env(place: str, server_url: str = "") -> dict[str, str]:
    """The environment that makes the agent run at ``place``."""
    if place == GRAPH:
        return {"CLARIGATE_AGENT__GRAPH": "tests.agent.user_graphs:plain"}
    if place in (SERVER, OTHER):
        return {
            "LANGGRAPH_URL": server_url,
            "CLARIGATE_AGENT__ASSISTANT_ID": "agent" if place == SERVER else "asker",
        }
    return {}


def cases(*places: str) -> list[tuple[str, str]]:
    """(setting, place) for every setting that can be set at each of ``places``."""
    skip = {(GRAPH, "graph"), (BUILT_IN, "graph"), (SERVER, "assistant_id"), (OTHER, "assistant_id")}
    return [(name, place) for place in places for name in APPLIES if (place, name) not in skip]
