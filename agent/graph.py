"""The agent graph: ``create_agent`` with the clarification tool, prompt and middleware."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, HumanInTheLoopMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver

from clarigate.agent.answer_attachments import AnswerAttachmentsMiddleware
from clarigate.agent.clarify_first import ClarifyFirstMiddleware
from clarigate.agent.empty_answers import empty_answer_retry
from clarigate.agent.history import AnswerUnfinishedCallsMiddleware
from clarigate.agent.limits import ModelCallLimit, ToolCallLimit
from clarigate.agent.middleware import (
    ClarificationInModelStepMiddleware,
    ClarificationMiddleware,
    ProceedWithoutClarificationMiddleware,
)
from clarigate.agent.observe import ToolCallLogMiddleware
from clarigate.agent.prompts import SYSTEM_PROMPT
from clarigate.agent.settings import DECISIONS
from clarigate.agent.speaker_prompt import SpeakerPromptMiddleware
from clarigate.agent.tool_errors import tool_errors_to_model
from clarigate.agent.tools import build_ask_clarification_tool

# The decisions an approval may allow (``settings.DECISIONS``); ``true`` or nothing allows the first
# three (``respond``, "Reply instead", only when named: the person's message stands in for the
# tool's result).


def approval_config(require_approval: Mapping[str, Sequence[str] | bool | None]) -> dict[str, Any]:
    """``HumanInTheLoopMiddleware``'s ``interrupt_on`` from ``agent.require_approval``.

    A tool name maps to the decisions allowed (``[approve, reject]``, ``[approve, edit,
    reject, respond]``); ``true`` or nothing means approve, edit and reject. ``ValueError`` for an
    unknown decision.
    """
    interrupt_on: dict[str, Any] = {}
    for name, allowed in require_approval.items():
        if allowed is False:
            continue
        decisions = list(DECISIONS[:3]) if allowed is None or allowed is True else [str(d) for d in allowed]
        unknown = [d for d in decisions if d not in DECISIONS]
        if unknown or not decisions:
            allowed_text = ", ".join(DECISIONS)
            raise ValueError(
                f"agent.require_approval.{name}: decisions are some of {allowed_text}, got {decisions}"
            )
        interrupt_on[name] = {"allowed_decisions": decisions}
    return interrupt_on


def _has_after_model(middleware: AgentMiddleware[Any, Any, Any]) -> bool:
    """True when ``middleware`` has an ``after_model`` hook (a graph step after each model call)."""
    kind = type(middleware)
    return kind.after_model is not AgentMiddleware.after_model or (
        kind.aafter_model is not AgentMiddleware.aafter_model
    )


def build_agent_graph(
    model: BaseChatModel,
    *,
    tools: Sequence[BaseTool] = (),
    checkpointer: BaseCheckpointSaver | None = None,
    allow_clarification: bool = False,
    disable_clarification: bool = False,
    system_prompt: str = SYSTEM_PROMPT,
    require_approval: Mapping[str, Sequence[str] | bool | None] | None = None,
    max_model_calls: int | None = None,
    max_tool_calls: int | None = None,
    summarize_after_tokens: int | None = None,
    context_schema: type[Any] | None = None,
) -> Any:
    """The compiled agent: ``ask_clarification`` plus ``tools``, on ``checkpointer``.

    ``disable_clarification`` answers every question with "proceed with your best
    judgment" (non-interactive use); it also switches the clarify-first phase off.
    ``require_approval`` stops the named tools for a person's decision before they run
    (an interrupt, shown as an approval). Middleware that is not needed is left out:
    every hook is one more graph step. ``after_model`` hooks run last-listed first, so the
    clarification (which ends the run and runs no sibling call) is decided before the tool
    limit and the approvals; with no such hook it is decided in the model step itself. A tool
    that raises answers its call with an error tool message (``clarigate.agent.tool_errors``); an
    empty model answer is asked for once more (``clarigate.agent.empty_answers``).
    ``context_schema``: the run context the graph declares (the shipped server graph's).
    """
    middleware = _middleware(
        model,
        allow_clarification=allow_clarification,
        disable_clarification=disable_clarification,
        require_approval=require_approval,
        max_model_calls=max_model_calls,
        max_tool_calls=max_tool_calls,
        summarize_after_tokens=summarize_after_tokens,
    )
    return create_agent(
        model,
        tools=[build_ask_clarification_tool(), *tools],
        system_prompt=system_prompt,
        middleware=middleware,
        checkpointer=checkpointer,
        context_schema=context_schema,
    )


def _middleware(
    model: BaseChatModel,
    *,
    allow_clarification: bool,
    disable_clarification: bool,
    require_approval: Mapping[str, Sequence[str] | bool | None] | None,
    max_model_calls: int | None,
    max_tool_calls: int | None,
    summarize_after_tokens: int | None,
) -> list[AgentMiddleware[Any, Any, Any]]:
    """The middleware ``build_agent_graph`` needs, in the order its docstring explains."""
    # wrap_model_call only (no graph step): the model knows who speaks in a group chat
    middleware: list[AgentMiddleware[Any, Any, Any]] = [
        AnswerUnfinishedCallsMiddleware(),
        SpeakerPromptMiddleware(),
    ]
    if allow_clarification and not disable_clarification:
        middleware.append(ClarifyFirstMiddleware(model))
    if summarize_after_tokens:
        from langchain.agents.middleware import SummarizationMiddleware

        # past the threshold, older messages become one summary; the most recent third is kept as is
        recent = max(summarize_after_tokens // 3, 1)
        middleware.append(
            SummarizationMiddleware(
                model, trigger=("tokens", summarize_after_tokens), keep=("tokens", recent)
            )
        )
    if max_model_calls:
        middleware.append(ModelCallLimit(max_model_calls))
    if require_approval:
        middleware.append(HumanInTheLoopMiddleware(approval_config(require_approval)))
        middleware.append(AnswerAttachmentsMiddleware())  # the photo sent with a decision
    if max_tool_calls:
        middleware.append(ToolCallLimit(max_tool_calls))
    # wrap_tool_call: the first listed is outermost, so the log sees the error message
    middleware += [ToolCallLogMiddleware(), tool_errors_to_model()]
    if disable_clarification:
        middleware.append(ProceedWithoutClarificationMiddleware())
    elif any(_has_after_model(m) for m in middleware):
        middleware.append(ClarificationMiddleware())
    else:  # nothing else looks at the model's message: answer it in the model step
        middleware.append(ClarificationInModelStepMiddleware())
    # nearest the model (wrap_model_call only, no graph step): an empty answer is asked for again
    return middleware + empty_answer_retry()
