"""The clarification middleware: answers ``ask_clarification`` and ends the run there.

Inside ``create_agent`` a ``Command(goto=END)`` returned from ``wrap_tool_call`` does not
end the run (only ``return_direct`` tools do), so the call is answered in ``after_model``
instead: the hook writes the ToolMessages itself and jumps to the end, and the tool
node never runs. That also keeps sibling tool calls of the same message from running.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import Any

from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    hook_config,
)
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.runtime import Runtime
from langgraph.types import Command

from clarigate.agent.invalid_calls import answer_invalid_calls, log_lost_stop, model_call_counted
from clarigate.agent.prompts import NOT_RUN_WHILE_ASKING, PROCEED_WITHOUT_ANSWER
from clarigate.agent.protocol import HumanInputRequest, normalize_with_omissions, render_text_fallback
from clarigate.agent.protocol.coerce import clean, scalar_text
from clarigate.agent.protocol.models import MAX_STRING
from clarigate.agent.protocol.normalize import read_key
from clarigate.agent.shown_above import fit_question
from clarigate.agent.tools import ASK_CLARIFICATION

#: Key of the request in ``ToolMessage.artifact``.
HUMAN_INPUT_KEY = "human_input"

#: What the model is told when its ``ask_clarification`` arguments had to be repaired.
REPAIR_NOTES = {
    "REPAIRED_TRUNCATED": "(Note: your ask_clarification arguments were cut off or not valid JSON; "
    "the question above is what could be read from them, and it was asked as shown.)",
    "REPAIRED_NOT_OBJECT": "(Note: your ask_clarification arguments were not a JSON object; "
    "they were read as shown above. Send an object with `question` next time.)",
    "REPAIRED_UNREADABLE": "(Note: your ask_clarification arguments could not be read; "
    "a general question was asked instead, as shown above.)",
}


#: What the model is told when the protocol's limits left part of its question out.
OMITTED_NOTE = (
    "(Note: the question was too large for the chat platforms (at most 16 fields, 24 options each, "
    "200 characters a text, 16 KB in all), so the person was not shown: {omitted}. Only what is "
    "shown above was asked; ask about the rest in a later question if you still need it.)"
)
#: What the model is told when its question was asked as its last sentence (``asked_last``).
SPLIT_NOTE = (
    "the question is {length} characters long (a question holds {limit}): it was asked as its last "
    "sentences that fit, {asked}, and the text before it was put before the context"
)
#: What the model is told when its question and context could not be held by the request: the
#: person was shown them in full right above the question (``asked_last``).
ABOVE_NOTE = (
    "(Note: your question and its context were too long for a question on the chat platforms "
    "(200 characters each), so the person was shown them in full, as you wrote them, right above "
    "the question, which asked {asked}.)"
)
#: Key, in the ``ToolMessage.artifact`` of a request, of the text shown right above it.
SHOWN_ABOVE_KEY = "shown_above"


def asked_last(args: Any) -> tuple[Any, list[str], str | None]:
    """The arguments with a question or context too long for the request fitted in it, as an
    interrupt's are (``shown_above.fit_question``): a question too long asked as its last
    sentences ending in "?", the text before it put before the context; what still does not fit
    shown in full right above the question (the third item, None when nothing is), the context
    saying so (the model told by ``clarification_tool_message``); a split noted for the model
    (the second item). Unchanged when both fit."""
    if not isinstance(args, dict):
        return args, [], None
    question = clean(scalar_text(read_key(args, "question")) or "")
    context = clean(scalar_text(args.get("context")) or "")
    if len(question) <= MAX_STRING and len(context) <= MAX_STRING:
        return args, [], None
    asked, fitted, above = fit_question(question, context, above=True)
    shown = json.dumps(asked, ensure_ascii=False)
    notes = [] if above else [SPLIT_NOTE.format(length=len(question), limit=MAX_STRING, asked=shown)]
    return {**args, "question": asked, "context": fitted}, notes, above


def above_in(message: Any) -> str | None:
    """The text shown right above the request a ToolMessage carries (``asked_last``), if any."""
    artifact = getattr(message, "artifact", None)
    above = artifact.get(SHOWN_ABOVE_KEY) if isinstance(artifact, dict) else None
    return above if isinstance(above, str) and above else None


def clarification_tool_message(
    request: HumanInputRequest,
    repaired: str | None = None,
    omitted: Sequence[str] = (),
    above: str | None = None,
) -> ToolMessage:
    """The ToolMessage that carries a request: text fallback as content, request as artifact.

    ``repaired`` (a key of ``REPAIR_NOTES``) adds a note for the model on what was made of
    arguments it sent broken, ``omitted`` one on what the limits left out of its question
    (``normalize_with_omissions``); the person sees the request, not the notes, and ``above``
    right above it (``asked_last``).
    """
    content = render_text_fallback(request)
    if above:  # a client that shows the tool's text alone shows it all
        content = f"{above}\n\n{content}"
    if repaired:
        content += "\n\n" + REPAIR_NOTES.get(repaired, REPAIR_NOTES["REPAIRED_UNREADABLE"])
    if omitted:
        content += "\n\n" + OMITTED_NOTE.format(omitted="; ".join(omitted))
    if above:
        content += "\n\n" + ABOVE_NOTE.format(asked=json.dumps(request.question, ensure_ascii=False))
    return ToolMessage(
        content=content,
        artifact={HUMAN_INPUT_KEY: request.to_artifact(), **({SHOWN_ABOVE_KEY: above} if above else {})},
        tool_call_id=request.tool_call_id,
        name=ASK_CLARIFICATION,
        id=request.request_id,
    )


def request_in(message: Any) -> HumanInputRequest | None:
    """The request a ToolMessage carries, if it carries one."""
    artifact = getattr(message, "artifact", None)
    if not isinstance(message, ToolMessage) or not isinstance(artifact, dict):
        return None
    raw = artifact.get(HUMAN_INPUT_KEY)
    return HumanInputRequest.model_validate(raw) if isinstance(raw, dict) else None


def _without_stray_tool_use(message: AIMessage) -> AIMessage:
    """The message without list-content ``tool_use`` blocks that no tool call answers.

    Anthropic rejects a history where a ``tool_use`` block has no matching result.
    """
    if not isinstance(message.content, list):
        return message
    call_ids = {c["id"] for c in message.tool_calls} | {c.get("id") for c in message.invalid_tool_calls}
    kept = [
        block
        for block in message.content
        if not (
            isinstance(block, dict) and block.get("type") == "tool_use" and block.get("id") not in call_ids
        )
    ]
    if len(kept) == len(message.content):
        return message
    return message.model_copy(update={"content": kept})


def _with_fresh_call_ids(message: AIMessage, used: Collection[str]) -> AIMessage:
    """The message with a new id for every tool call whose id is empty or already taken.

    Some OpenAI-compatible servers number calls per message ("0", "call_0") or send none.
    A reused id would give the question the request id of an older one, and its
    ToolMessage (same message id) would replace the old one instead of answering the call.
    """
    taken = set(used)
    ids_by_old: dict[str | None, list[str]] = {}  # old id -> new ids, in call order

    def fresh(call: Any) -> Any:
        old = call.get("id")
        new = old if old and old not in taken else f"{old or 'call'}_{uuid.uuid4().hex[:12]}"
        taken.add(new)
        ids_by_old.setdefault(old, []).append(new)
        return call if new == old else {**call, "id": new}

    calls = [fresh(c) for c in message.tool_calls]
    invalid = [fresh(c) for c in message.invalid_tool_calls]
    if all(new == [old] * len(new) for old, new in ids_by_old.items()):
        return message
    content = message.content
    if isinstance(content, list):  # list content repeats the ids in its tool_use blocks
        content = [
            {**b, "id": ids_by_old[b.get("id")].pop(0)}
            if isinstance(b, dict) and b.get("type") == "tool_use" and ids_by_old.get(b.get("id"))
            else b
            for b in content
        ]
    return message.model_copy(update={"tool_calls": calls, "invalid_tool_calls": invalid, "content": content})


def _is_ask(call: Any) -> bool:
    return isinstance(call, dict) and (call.get("name") or "").strip() == ASK_CLARIFICATION


def read_ask_arguments(call: Any) -> tuple[Any, str | None]:
    """The best reading of an ``ask_clarification`` call's arguments, and what was repaired.

    A call LangChain could not parse (``invalid_tool_calls``: truncated JSON) is read as
    far as it goes; arguments that are not an object (a list, a bare string) are read as
    the question or the options.
    """
    from langchain_core.utils.json import parse_partial_json

    args = call.get("args")
    if "error" in call or isinstance(args, str):  # an invalid call keeps the raw text
        raw = args if isinstance(args, str) else ""
        try:
            parsed = parse_partial_json(raw) if raw.strip() else None
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            return parsed, "REPAIRED_TRUNCATED"
        if isinstance(parsed, str) or (
            parsed is None and raw.strip() and not raw.lstrip().startswith(("{", "["))
        ):
            return {"question": parsed if isinstance(parsed, str) else raw}, "REPAIRED_NOT_OBJECT"
        args = parsed
        if not isinstance(args, list):
            return {}, "REPAIRED_UNREADABLE"
    if isinstance(args, dict):
        return args, None
    if isinstance(args, list) and args and all(isinstance(a, str) for a in args):
        return {"options": args}, "REPAIRED_NOT_OBJECT"
    return {}, "REPAIRED_UNREADABLE"


def answer_clarification(message: AIMessage, used_call_ids: Collection[str] = ()) -> list[Any] | None:
    """The messages that answer every tool call of ``message`` when it asks a clarification.

    The first ``ask_clarification`` call becomes the request; every other call (a
    second question, any other tool, an unparsable call) is answered "not run", so
    each call has its result and the history stays valid for every provider. A call
    LangChain could not parse (``invalid_tool_calls``) or whose arguments are not an
    object still asks (the best reading of it) and still stops its siblings; its tool
    message tells the model what was repaired. The request comes last (providers accept
    results in any order): the thread's last message is then the open question, which
    is how a client finds it after a restart. Call ids that are empty or in
    ``used_call_ids`` (answered earlier in the thread) are replaced, so every call has
    its own result and every request its own id.
    """
    if not any(_is_ask(c) for c in [*message.tool_calls, *message.invalid_tool_calls]):
        return None
    original = message
    message = _without_stray_tool_use(_with_fresh_call_ids(message, used_call_ids))
    asks = [c for c in [*message.tool_calls, *message.invalid_tool_calls] if _is_ask(c)]
    args, repaired = read_ask_arguments(asks[0])
    args, split, above = asked_last(args)
    request, omitted = normalize_with_omissions(args, tool_call_id=asks[0]["id"] or "")  # id never empty now
    omitted = [*split, *omitted]
    answers: list[Any] = []
    if message is not original:
        answers.append(message)  # same id: replaces the stored message
    for call in [*message.tool_calls, *message.invalid_tool_calls]:
        if call is not asks[0] and call.get("id"):
            answers.append(
                ToolMessage(
                    content=NOT_RUN_WHILE_ASKING,
                    tool_call_id=call["id"],
                    name=call.get("name") or "unknown",
                    status="error",
                )
            )
    answers.append(clarification_tool_message(request, repaired, omitted, above))
    return answers


def _answers_after(
    messages: Sequence[Any], used: Collection[str] = ()
) -> tuple[list[Any], str | None] | None:
    """``answer_clarification`` for the last message of ``messages`` (the thread so far), and
    where the run goes next ("end"); else the error results of its unparsable calls and
    "model" when nothing else runs (``invalid_calls``). The call ids answered in ``messages``
    and ``used`` are taken."""
    last = messages[-1] if messages else None
    if not isinstance(last, AIMessage):
        return None
    log_lost_stop(last)
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    answers = answer_clarification(last, answered.union(used))
    if answers is not None:
        return answers, "end"
    invalid = answer_invalid_calls(messages, used)
    return None if invalid is None else (invalid[0], "model" if invalid[1] else None)


def _as_given(request: ModelRequest) -> ModelRequest:
    """``request`` with form answers holding option values as the model wrote them
    (``clarification_given``)."""
    from clarigate.agent.clarification_given import answers_as_given

    messages = answers_as_given(request.messages)
    return request if messages is None else request.override(messages=messages)


class ClarificationMiddleware(AgentMiddleware):
    """Answers ``ask_clarification`` after the model call and ends the run; the model reads a
    form's answer with option values as it wrote them (``clarification_given``)."""

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        """Call the model with answers as given."""
        return handler(_as_given(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        """Async twin of ``wrap_model_call``."""
        return await handler(_as_given(request))

    @hook_config(can_jump_to=["end", "model"])
    def after_model(self, state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
        """Answer the clarification (and its siblings) and jump to the end; answer unparsable
        calls and call the model again."""
        found = _answers_after(state["messages"])
        if found is None:
            return None
        answers, jump = found
        if jump != "model":
            return {"messages": answers, **({"jump_to": jump} if jump else {})}
        return {"messages": answers, "jump_to": jump, **model_call_counted(state)}

    @hook_config(can_jump_to=["end", "model"])
    async def aafter_model(self, state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
        """Async twin of ``after_model`` (no I/O, so it simply calls it)."""
        return self.after_model(state, runtime)


class ClarificationInModelStepMiddleware(AgentMiddleware):
    """``ClarificationMiddleware`` done inside the model step, for agents with no other
    ``after_model`` hook (those must see the model's message before the run ends, so they get
    ``ClarificationMiddleware``).

    The step writes the model's message and then the answers (a repaired message replaces it by
    id, as the hook's would), and ends the run: the same messages, state and run events as the
    hook gives, one graph step and one checkpoint fewer per model call.
    """

    @staticmethod
    def _answered(request: ModelRequest, response: ModelResponse) -> ModelResponse | ExtendedModelResponse:
        history = request.state["messages"]
        # the model step answers earlier unparsable calls in the thread (its repair), so the hook
        # sees their ids as answered
        repaired = {
            call_id
            for m in history
            if isinstance(m, AIMessage)
            for c in m.invalid_tool_calls
            if (call_id := c.get("id")) is not None
        }
        found = _answers_after([*history, *response.result], repaired)
        if found is None:
            return response
        answers, jump = found
        return ExtendedModelResponse(
            model_response=ModelResponse(
                result=[*response.result, *answers], structured_response=response.structured_response
            ),
            command=Command(update={"jump_to": jump}) if jump else None,
        )

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse | ExtendedModelResponse:
        """Call the model (answers as given), then answer a clarification it asks and end the run."""
        return self._answered(request, handler(_as_given(request)))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse | ExtendedModelResponse:
        """Async twin of ``wrap_model_call``."""
        return self._answered(request, await handler(_as_given(request)))


class ProceedWithoutClarificationMiddleware(AgentMiddleware):
    """For non-interactive use: ``ask_clarification`` answers "proceed with your best judgment"."""

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> ToolMessage | Command:
        """Answer ``ask_clarification`` without running it; run every other tool."""
        if request.tool_call["name"] != ASK_CLARIFICATION:
            return handler(request)
        return ToolMessage(
            content=PROCEED_WITHOUT_ANSWER, tool_call_id=request.tool_call["id"], name=ASK_CLARIFICATION
        )

    async def awrap_tool_call(
        self, request: Any, handler: Callable[[Any], Awaitable[Any]]
    ) -> ToolMessage | Command:
        """Async twin of ``wrap_tool_call``."""
        if request.tool_call["name"] != ASK_CLARIFICATION:
            return await handler(request)
        return ToolMessage(
            content=PROCEED_WITHOUT_ANSWER, tool_call_id=request.tool_call["id"], name=ASK_CLARIFICATION
        )
