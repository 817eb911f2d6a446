"""Tool calls the model sent with arguments LangChain could not parse, answered within the run,
and the model's stops that lose part of its answer, logged.

A call whose arguments are truncated or not JSON lands in ``AIMessage.invalid_tool_calls``;
``create_agent`` runs none of them and, when the message has no other call, ends the run as
if the model had answered (its message has no text), the call answered only at the next
message. Here each such call gets an error tool message at once and the model is called again
(``jump_to="model"``; the run's model-call limit still bounds it), so it can send the call
again. ``ask_clarification`` calls are not handled here: ``middleware.answer_clarification``
asks the best reading of them.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

log = logging.getLogger(__name__)

#: Marks the tool message that answers an unparsable call (``additional_kwargs``).
INVALID_CALL_KEY = "clarigate_invalid_call"

#: What the model reads as the result of a call whose arguments could not be parsed.
MALFORMED_CALL = (
    "Tool call {name} with id {call_id} could not be executed - arguments were malformed or "
    "truncated. It was not run; send the call again with complete, valid JSON arguments."
)

#: ``finish_reason`` values that mean the answer is not the model's whole answer.
LOST_STOPS = {
    "content_filter": "the model's provider withheld its answer (finish_reason content_filter)",
    "length": "the model's answer was cut off at its length limit (finish_reason length)",
}


def stop_reason(message: Any) -> str | None:
    """The ``finish_reason`` of an AI message when it lost part of the answer (``LOST_STOPS``)."""
    if not isinstance(message, AIMessage):
        return None
    reason = (message.response_metadata or {}).get("finish_reason")
    return reason if reason in LOST_STOPS else None


def log_lost_stop(message: Any) -> None:
    """One WARNING for a model message whose provider cut or withheld the answer."""
    if (reason := stop_reason(message)) is not None:
        log.warning("%s", LOST_STOPS[reason])


def model_call_counted(state: Any) -> dict[str, int]:
    """The model-call counts of ``ModelCallLimitMiddleware`` (``limits.ModelCallLimit``), one up.

    Its ``after_model`` hook counts the call; a hook that runs before it (listed after it) and
    jumps back to the model skips it, and the limit would never be reached. Such a hook counts
    the call itself. A graph without the limit ignores the keys: they are not in its state."""
    return {
        "thread_model_call_count": state.get("thread_model_call_count", 0) + 1,
        "run_model_call_count": state.get("run_model_call_count", 0) + 1,
    }


def _warned_this_run(messages: Sequence[Any]) -> bool:
    """True when an unparsable call was answered since the person's last message (this run)."""
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return False
        if isinstance(message, ToolMessage) and message.additional_kwargs.get(INVALID_CALL_KEY):
            return True
    return False


def answer_invalid_calls(
    messages: Sequence[Any], used: Collection[str] = ()
) -> tuple[list[Any], bool] | None:
    """The messages that answer the unparsable calls of the last message of ``messages``, and
    whether the model is to be called again (the message has no call that runs); None when it
    has none. Call ids that are empty or taken (answered in ``messages`` or in ``used``) are
    replaced first, as ``middleware.answer_clarification`` does (the repaired message first)."""
    from clarigate.agent.middleware import _with_fresh_call_ids, _without_stray_tool_use

    last = messages[-1] if messages else None
    if not isinstance(last, AIMessage) or not last.invalid_tool_calls:
        return None
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    message = _without_stray_tool_use(_with_fresh_call_ids(last, answered.union(used)))
    answers: list[Any] = [] if message is last else [message]
    names = sorted({(c.get("name") or "unknown") for c in message.invalid_tool_calls})
    if not _warned_this_run(messages[:-1]):
        log.warning("the model sent unparsable arguments to %s; answered with an error", ", ".join(names))
    for call in message.invalid_tool_calls:
        name = call.get("name") or "unknown"
        answers.append(
            ToolMessage(
                content=MALFORMED_CALL.format(name=name, call_id=call["id"]),
                tool_call_id=call["id"],
                name=name,
                status="error",
                additional_kwargs={INVALID_CALL_KEY: True},
            )
        )
    return answers, not message.tool_calls
