"""The agent's settings: one model, read by the library, the gateway's ``agent:`` section and both
runners (in process and on a LangGraph server).

``AgentOptions`` is what an operator chooses (the YAML ``agent:`` section and its
``CLARIGATE_AGENT__…`` variables); ``AgentSettings`` is the same with the folder the bot keeps
its files in (the bot's ``data_dir``, not a key of the section), which is what builds an agent.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, Field, TypeAdapter, ValidationError, field_validator
from pydantic_settings import NoDecode

from clarigate.agent.checkpoint import url_problem
from clarigate.agent.mcp_settings import settings_problems

_BOOL = TypeAdapter(bool)

#: The decisions an approval may allow (``HumanInTheLoopMiddleware``'s), in their shown order.
DECISIONS = ("approve", "edit", "reject", "respond")


def env_flag(value: str | None, name: str = "the flag") -> bool:
    """A boolean from the environment, read as the gateway's configuration reads it (pydantic's
    words: ``1/0``, ``true/false``, ``t/f``, ``yes/no``, ``y/n``, ``on/off``); unset or empty is
    False, and any other word is an error naming ``name``, never a silent False."""
    text = value or ""
    if not text.strip():
        return False
    try:
        return _BOOL.validate_python(text)
    except ValidationError:
        words = "true or false (1/0, yes/no, on/off)"
        raise ValueError(f"{name}={text!r} is not a boolean: use {words}") from None


class AgentOptions(BaseModel):
    """The agent section: model, checkpointer, clarification switches, tools, graph, approvals,
    limits, images, and the LangGraph server that runs the agent instead of this process.

    Every value can come from the environment (``CLARIGATE_AGENT__TOOLS='["pkg.mod:tool"]'``,
    ``CLARIGATE_AGENT__MAX_MODEL_CALLS=20``, ``ALLOW_CLARIFICATION=1``); secrets an MCP
    server needs are written ``${NAME}`` and read from the environment when it starts.
    """

    model: str = "offline"  # LLM_MODEL: "offline", "scripted:PATH", "provider:model"
    checkpointer_url: str | None = None  # CHECKPOINTER_URL; None: SQLite under the data dir
    allow_clarification: bool = False  # clarify-first phase before the agent acts
    disable_clarification: bool = False  # the tool answers "proceed with your best judgment"
    instructions: str | None = None  # text, or a file path, added to the system prompt
    tools: Annotated[tuple[str, ...], NoDecode] = ()  # import paths ``package.module:name``
    mcp_servers: dict[str, dict[str, Any]] = Field(default_factory=dict)  # MultiServerMCPClient connections
    graph: str | None = None  # ``package.module:attr``: a compiled graph or a factory(checkpointer)
    # tool name -> allowed decisions (approve, edit, reject); a plain list means all three
    # (NoDecode: from the environment too, a comma-separated list or JSON, as ``_approvals`` reads)
    require_approval: Annotated[dict[str, list[str] | None], NoDecode] = Field(default_factory=dict)
    # tools safe to run twice: one cut off by a restart runs again (others: the model is told)
    idempotent_tools: Annotated[tuple[str, ...], NoDecode] = ()  # AGENT_IDEMPOTENT_TOOLS
    max_model_calls: int | None = Field(default=None, ge=1)  # per run
    max_tool_calls: int | None = Field(default=None, ge=1)  # per run
    recursion_limit: int = Field(default=50, ge=5)  # graph steps per run
    summarize_after_tokens: int | None = Field(default=None, ge=1000)
    # images sent with a message are fetched up to this size each and shown to the model (0: never)
    max_image_bytes: int = Field(default=5 * 1024 * 1024, ge=0)
    # a LangGraph server runs the agent instead of this process (LANGGRAPH_URL; key: LANGGRAPH_API_KEY)
    server_url: str | None = None
    assistant_id: str = "agent"  # the server's assistant id or graph name

    @field_validator("tools", "idempotent_tools", mode="before")
    @classmethod
    def _paths(cls, value: Any) -> Any:
        """A JSON list, a comma-separated list (from the environment) or one path."""
        if isinstance(value, str):
            text = value.strip()
            return (
                json.loads(text)
                if text.startswith("[")
                else [p.strip() for p in text.split(",") if p.strip()]
            )
        return value

    @field_validator("checkpointer_url")
    @classmethod
    def _checkpointer_scheme(cls, url: str | None) -> str | None:
        """A scheme no checkpointer is offered for (``mysql://``, ``redis://``) is refused with the
        configuration, before anything starts (``clarigate.agent.checkpoint.url_problem``)."""
        problem = url_problem(url)
        if problem is not None:
            raise ValueError(problem)
        return url

    @field_validator("require_approval", mode="before")
    @classmethod
    def _approvals(cls, value: Any) -> Any:
        """``[delete_file, deploy]`` (all decisions) or ``{deploy: [approve, reject]}``; JSON from the
        environment."""
        if isinstance(value, str):
            text = value.strip()
            value = (
                json.loads(text) if text.startswith(("[", "{")) else [p for p in text.split(",") if p.strip()]
            )
        if isinstance(value, list):
            return {str(name).strip(): None for name in value}
        return value

    @field_validator("require_approval")
    @classmethod
    def _decisions(cls, value: dict[str, list[str] | None]) -> dict[str, list[str] | None]:
        """Each tool's decisions are some of ``DECISIONS`` (none listed: all but respond)."""
        for name, allowed in value.items():
            unknown = [d for d in allowed or () if d not in DECISIONS]
            if unknown or allowed == []:
                raise ValueError(f"{name}: decisions are some of {', '.join(DECISIONS)}, got {allowed}")
        return value

    @field_validator("mcp_servers", mode="before")
    @classmethod
    def _servers(cls, value: Any) -> Any:
        """JSON text from the environment."""
        return json.loads(value) if isinstance(value, str) and value.strip() else value

    @field_validator("mcp_servers")
    @classmethod
    def _server_settings(cls, value: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """Every key of every server is a setting of its transport: a misspelt one stops the
        start, naming the server and the key (``clarigate.agent.mcp_settings``)."""
        problems = settings_problems(value)
        if problems:
            raise ValueError("; ".join(problems))
        return value


class AgentSettings(AgentOptions):
    """What builds an agent: the agent section's options and the folder for its files."""

    data_dir: str = ".clarigate"  # CLARIGATE_DATA_DIR: the SQLite checkpointer lives here by default

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> AgentSettings:
        """Settings from ``LLM_MODEL``, ``CHECKPOINTER_URL``, ``CLARIGATE_DATA_DIR``,
        ``ALLOW_CLARIFICATION``, ``DISABLE_CLARIFICATION`` and ``AGENT_IDEMPOTENT_TOOLS``
        (defaults where unset)."""
        env = os.environ if environ is None else environ
        return cls(
            model=env.get("LLM_MODEL") or "offline",
            checkpointer_url=env.get("CHECKPOINTER_URL") or None,
            data_dir=env.get("CLARIGATE_DATA_DIR") or ".clarigate",
            allow_clarification=env_flag(env.get("ALLOW_CLARIFICATION"), "ALLOW_CLARIFICATION"),
            disable_clarification=env_flag(env.get("DISABLE_CLARIFICATION"), "DISABLE_CLARIFICATION"),
            idempotent_tools=cls._paths(env.get("AGENT_IDEMPOTENT_TOOLS") or ()),
        )
