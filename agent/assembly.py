"""What ``ClarifyingAgent.create`` builds from the settings: tools, model, checkpointer, graph.

The built-in graph gets the chat model, the configured tools and MCP servers' tools (their
sessions open until the agent closes); the
operator's own graph (``agent.graph``) gets only the checkpointer. Nothing here runs a turn.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from clarigate.agent.settings import AgentOptions, AgentSettings

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.tools import BaseTool
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from clarigate.agent.checkpoint import Checkpointer
    from clarigate.agent.mcp_sessions import MCPSessions

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AgentParts:
    """What an agent runs on: the compiled graph on its checkpointer, and what the harness shows."""

    graph: Any
    checkpointer: Checkpointer
    sees_images: bool
    tool_descriptions: dict[str, str]  # tool name -> description, for showing what a call does
    mcp: MCPSessions  # the MCP servers' sessions, open until the agent closes


async def assemble(
    settings: AgentSettings, *, model: BaseChatModel | None = None, tools: Sequence[BaseTool] = ()
) -> AgentParts:
    """Build the model, the checkpointer, the tools (MCP servers included) and the graph.

    Instructions and tools load first, so a path that does not import is reported before a
    checkpointer is opened; the checkpointer is closed again when the graph cannot be built.
    """
    from clarigate.agent.checkpoint import open_checkpointer
    from clarigate.agent.loading import load_instructions, load_tools
    from clarigate.agent.mcp_sessions import MCPSessions
    from clarigate.agent.models import build_chat_model
    from clarigate.agent.observe import keep_untraced_steps_inline
    from clarigate.agent.placement import check, place_of

    keep_untraced_steps_inline()
    check(settings, place_of(settings))  # a setting that would not apply stops here, named

    instructions = load_instructions(settings.instructions)
    all_tools = [*tools, *load_tools(settings.tools)]
    chat_model = None
    mcp = MCPSessions()
    if settings.graph is None:
        chat_model = model if model is not None else build_chat_model(settings.model)
        taken = {t.name: f"the agent's tool {t.name!r} (agent.tools)" for t in all_tools}
        mcp = await MCPSessions.open(settings.mcp_servers, taken=taken)
        all_tools += mcp.tools
    try:
        if settings.graph is None:
            settings = with_offered_names(settings, [t.name for t in all_tools])
        checkpointer = await open_checkpointer(settings.checkpointer_url, settings.data_dir)
    except BaseException:
        await mcp.aclose()
        raise
    try:
        graph = _graph(settings, chat_model, all_tools, checkpointer.saver, instructions)
    except BaseException:
        await checkpointer.aclose()
        await mcp.aclose()
        raise
    descriptions = {t.name: t.description for t in all_tools if getattr(t, "description", "")}
    return AgentParts(graph, checkpointer, _sees_images(chat_model), descriptions, mcp)


def with_offered_names(settings: AgentSettings, tools: list[str]) -> AgentSettings:
    """``settings`` with ``require_approval`` naming the offered tools (``ping`` of a prefixed
    server ``h``: ``h_ping``); ``SettingsDoNotApply`` naming a tool name that applies to no tool
    (``clarigate.agent.tool_names``)."""
    from clarigate.agent.placement import SettingsDoNotApply
    from clarigate.agent.tool_names import check_tool_names

    checked = check_tool_names(settings, tools)
    if checked.problems:
        raise SettingsDoNotApply(checked.problems)
    for line in checked.notes:
        log.info("%s", line)
    return settings.model_copy(update={"require_approval": checked.approvals})


def _graph(
    settings: AgentSettings,
    chat_model: BaseChatModel | None,
    tools: list[BaseTool],
    saver: BaseCheckpointSaver,
    instructions: str,
) -> Any:
    """The operator's own graph when ``agent.graph`` names one, else the built-in agent."""
    from clarigate.agent.loading import load_graph

    if settings.graph is not None:
        return load_graph(settings.graph, saver)
    assert chat_model is not None
    return built_in_graph(settings, chat_model, tools, saver, instructions)


def built_in_graph(
    options: AgentOptions,
    chat_model: BaseChatModel,
    tools: Sequence[BaseTool],
    saver: BaseCheckpointSaver | None,
    instructions: str,
    context_schema: type[Any] | None = None,
) -> Any:
    """The built-in agent from the ``agent:`` settings (in process, and the shipped server graph)."""
    from clarigate.agent.graph import build_agent_graph
    from clarigate.agent.prompts import SYSTEM_PROMPT

    prompt = SYSTEM_PROMPT + (f"\n\n{instructions}" if instructions else "")
    return build_agent_graph(
        chat_model,
        tools=tools,
        checkpointer=saver,
        allow_clarification=options.allow_clarification,
        disable_clarification=options.disable_clarification,
        system_prompt=prompt,
        require_approval=options.require_approval,
        max_model_calls=options.max_model_calls,
        max_tool_calls=options.max_tool_calls,
        summarize_after_tokens=options.summarize_after_tokens,
        context_schema=context_schema,
    )


def _sees_images(chat_model: BaseChatModel | None) -> bool:
    """False for the local model and for a model whose profile says it takes no images."""
    from clarigate.agent.models.local import LocalChatModel

    if isinstance(chat_model, LocalChatModel):
        return False
    if chat_model is not None and isinstance(chat_model.profile, Mapping):
        return chat_model.profile.get("image_inputs", True) is not False
    return True
