"""What one turn of the agent produced, read from the messages it added: the replies, the files,
the question it asked, the limit that ended it.

Shared by the in-process agent (``clarigate.agent.harness``) and the LangGraph server runner,
which reads the same messages from the thread's state.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from clarigate.agent.outgoing_files import OutgoingFile, files_in
from clarigate.agent.protocol import HumanInputRequest

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage


@dataclass(frozen=True)
class TurnOutput:
    """What one run produced: replies to show, files to send, and the request if the run asked."""

    replies: list[str] = field(default_factory=list)
    request: HumanInputRequest | None = None
    fallback_text: str | None = None  # the request's text fallback (ToolMessage content)
    usage: dict[str, dict[str, int]] = field(default_factory=dict)  # model -> {"input", "output"} tokens
    limit: str | None = None  # "model_calls" | "tool_calls" when a limit ended the run
    run_id: str | None = None  # the run's id in tracing (LangSmith's root run), when known
    # images and files of the final messages' content and of the tools' artifacts, in order
    files: list[OutgoingFile] = field(default_factory=list)
    # the run only closed a question the person dismissed and the graph could not take the
    # dismissal of (a typed interrupt's schema refused it): nothing to say, nothing failed
    dismissed: bool = False
    # the replies are the gateway's words, not the agent's answer (an answer to a question another
    # route's agent asked, not passed on): no 👍/👎 under them
    notice_only: bool = False
    # the last reply is what the question could not hold, shown right above it
    # (``interrupt_kinds.asking``): the gateway's text, never part of what the model streamed
    shown_above: str | None = None


def new_messages(
    messages: Sequence[BaseMessage], before: Sequence[BaseMessage], pending: Sequence[BaseMessage] = ()
) -> list[BaseMessage]:
    """The messages of ``messages`` (a thread's after a run) that ``before`` (its messages when the
    run began) did not hold, found by id: LangGraph's ``add_messages`` gives every message one, and
    a run may shorten the list (summarized, or trimmed with ``RemoveMessage``), so a position in it
    means nothing afterwards. A message without an id (a state without that reducer, where nothing
    is removed either) is new when it lies past the length the list had.

    ``pending``: the messages of ``before`` that were still pending writes (``pending_messages``).
    One written without an id is given a new one at every read of the state, so it is recognised
    by what it says instead: the first message of ``messages`` not held by id that says the same
    is that message, applied at last."""
    known = {message.id for message in before if message.id}
    held = {message.id for message in messages if message.id}
    unmatched = [message for message in pending if message.id not in held]
    fresh: list[BaseMessage] = []
    for i, message in enumerate(messages):
        if message.id in known if message.id else i < len(before):
            continue
        twin = next((m for m in unmatched if _says_the_same(m, message)), None)
        if twin is None:
            fresh.append(message)
        else:
            unmatched.remove(twin)
    return fresh


def pending_messages(tasks: Iterable[Any]) -> list[BaseMessage]:
    """The messages written by those of a state's ``tasks`` (a snapshot's ``PregelTask``s) that
    finished in a step that then stopped on an interrupt (a parallel branch that replied while
    another asked): writes still pending, which the state shows applied to its messages."""
    from langchain_core.messages import convert_to_messages

    found: list[BaseMessage] = []
    for task in tasks:
        result = getattr(task, "result", None)
        written = result.get("messages") if isinstance(result, Mapping) else None
        for item in written if isinstance(written, list | tuple) else [written] if written else []:
            try:
                found.extend(convert_to_messages([item]))
            except (ValueError, TypeError, NotImplementedError):
                continue  # not a message (a removal, a value of the graph's own): nothing to show
    return found


def _says_the_same(one: BaseMessage, other: BaseMessage) -> bool:
    """True when two messages are of one type and say the same (text, tool calls, call answered)."""

    def calls(message: BaseMessage) -> list[tuple[Any, Any]]:
        return [(c.get("name"), c.get("args")) for c in getattr(message, "tool_calls", None) or []]

    return (
        one.type == other.type
        and one.content == other.content
        and calls(one) == calls(other)
        and getattr(one, "tool_call_id", None) == getattr(other, "tool_call_id", None)
    )


def before_turn(messages: Sequence[BaseMessage], human_id: str) -> list[BaseMessage]:
    """The messages up to the turn's human message ``human_id``, it included: the thread as the
    turn found it, read from a list the turn added to without shortening it (all of ``messages``
    when that message is not there: nothing in it is known to be the turn's)."""
    found = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].id == human_id), None)
    return list(messages if found is None else messages[: found + 1])


def _with_stop_note(text: str, message: BaseMessage, messages: Sequence[BaseMessage]) -> str:
    """``text`` (a final model message's) with what the person is to know when the model's
    provider cut it off at the length limit or withheld it (``finish_reason``), in the language
    of their last message in ``messages``."""
    from clarigate.agent.invalid_calls import stop_reason
    from clarigate.agent.models.conversation import thread_locale
    from clarigate.agent.protocol import catalog

    reason = stop_reason(message)
    if reason == "length" and text:
        return f"{text}\n\n{catalog.text('model_answer_cut_off', thread_locale(messages))}"
    if reason == "content_filter" and not text:
        return catalog.text("model_answer_withheld", thread_locale(messages))
    return text


def turn_output(
    messages: Sequence[BaseMessage], before: Sequence[BaseMessage], pending: Sequence[BaseMessage] = ()
) -> TurnOutput:
    """The replies, files and request among the messages of this turn: those of ``messages`` (the
    thread's after the run) that ``before`` (the thread's when the turn began, ``pending`` the
    writes still pending in it) did not hold (``new_messages``)."""
    from langchain_core.messages import AIMessage, ToolMessage

    from clarigate.agent.limits import LIMIT_KEY
    from clarigate.agent.middleware import above_in, request_in
    from clarigate.agent.models.conversation import message_text
    from clarigate.agent.protocol import render_text_fallback

    replies: list[str] = []
    request: HumanInputRequest | None = None
    fallback: str | None = None
    limit: str | None = None
    above: str | None = None  # what the request could not hold, shown in full right above it
    carrying: list[Any] = []  # final messages' content and tools' artifacts, in order
    for message in new_messages(messages, before, pending):
        if isinstance(message, AIMessage) and not message.tool_calls:
            text = _with_stop_note(message_text(message).strip(), message, messages)
            if text:
                replies.append(text)
            limit = message.additional_kwargs.get(LIMIT_KEY) or limit
            carrying.append(message.content)
        elif (asked := request_in(message)) is not None:
            request, fallback = asked, render_text_fallback(asked)  # content may hold a note for the model
            above = above_in(message)
        elif isinstance(message, ToolMessage) and message.artifact is not None:
            carrying.append(message.artifact)
    return TurnOutput(
        replies=[*replies, above] if above else replies,
        request=request,
        fallback_text=fallback,
        limit=limit,
        files=files_in(carrying),
        shown_above=above,
    )
