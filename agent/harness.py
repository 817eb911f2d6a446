"""The agent as the gateway uses it: one turn in, replies or a clarification out.

The gateway's runner calls ``ClarifyingAgent.run_turn``; it never touches LangGraph directly.
The graph is the built-in one (``create_agent`` with the operator's tools, MCP servers,
approvals and limits) or the operator's own (``agent.graph``); both run on the mapped thread
the same way. A run that stops on ``interrupt()`` ends the turn with a request
(``clarigate.agent.interrupts``), and the answer to it resumes it with ``Command(resume=...)``.
"""

from __future__ import annotations

import base64
import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from clarigate.agent.events import EventSink, tell
from clarigate.agent.interrupt_kinds import asking_first
from clarigate.agent.protocol import HumanInputResponse, detect_locale
from clarigate.agent.settings import AgentSettings  # the agent's settings live there; named here too
from clarigate.agent.threads import AgentThreads
from clarigate.agent.turn_output import TurnOutput, before_turn, pending_messages, turn_output
from clarigate.agent.who import Speaker, graph_context, with_speaker

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.tools import BaseTool

    from clarigate.agent.checkpoint import Checkpointer

log = logging.getLogger(__name__)

#: Human message ids of named turns (``run_turn(turn_id=…)``) are uuid5s in this namespace.
TURN_NAMESPACE = uuid.UUID("6d1c0a51-3f7e-4b8e-9d61-2a4f0c7b9e13")


@dataclass(frozen=True)
class ImageInput:
    """An image that came with the person's message (bytes already fetched)."""

    data: bytes
    mime_type: str = "image/png"
    name: str = ""

    def describe(self) -> str:
        """``name, type, N bytes`` for models that cannot see images."""
        return ", ".join(p for p in (self.name or "image", self.mime_type, f"{len(self.data)} bytes") if p)


class ClarifyingAgent(AgentThreads):
    """A LangGraph agent with the clarification protocol and a checkpointer.

    Use ``async with await ClarifyingAgent.create(settings) as agent`` or call
    ``aclose`` when done.
    """

    def __init__(
        self,
        graph: Any,
        checkpointer: Checkpointer,
        settings: AgentSettings | None = None,
        *,
        sees_images: bool = True,
        tool_descriptions: Mapping[str, str] | None = None,
    ) -> None:
        """Use ``create``; this only holds what it built."""
        self._graph = graph
        self._checkpointer = checkpointer
        self.settings = settings or AgentSettings()
        self._sees_images = sees_images
        # tool name -> description, for showing what a tool call is doing
        self._tool_descriptions: dict[str, str] = dict(tool_descriptions or {})

    @classmethod
    async def create(
        cls,
        settings: AgentSettings,
        *,
        model: BaseChatModel | None = None,
        tools: Sequence[BaseTool] = (),
    ) -> ClarifyingAgent:
        """Build the model, the checkpointer, the tools (MCP servers included) and the graph.

        ``model`` replaces the one ``settings.model`` names and ``tools`` are offered
        besides ``ask_clarification`` and the configured ones (both for embedding and tests).
        A tool path that does not import, or an MCP server that does not start or answer,
        is a ``ValueError`` naming it.
        """
        from clarigate.agent.assembly import assemble

        parts = await assemble(settings, model=model, tools=tools)
        agent = cls(
            parts.graph,
            parts.checkpointer,
            settings,
            sees_images=parts.sees_images,
            tool_descriptions=parts.tool_descriptions,
        )
        agent._mcp = parts.mcp
        return agent

    async def __aenter__(self) -> ClarifyingAgent:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _config(
        self, thread_id: str, metadata: Mapping[str, Any] | None, callbacks: list[Any]
    ) -> dict[str, Any]:
        """The run's config: the thread, the recursion limit, and tracing metadata (LangSmith)."""
        return {
            "configurable": {"thread_id": thread_id},
            "recursion_limit": self.settings.recursion_limit,
            "run_name": "clarigate turn",
            "metadata": {"thread_id": thread_id, **(metadata or {})},
            "callbacks": callbacks,
        }

    def _content(self, text: str, images: Sequence[ImageInput]) -> Any:
        """The human message's content: the text, and the images as blocks the model can see."""
        if not images:
            return text
        if not self._sees_images:
            described = "; ".join(i.describe() for i in images)
            return f"{text}\n\n(images: {described})".strip()
        blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        for image in images:
            data = base64.b64encode(image.data).decode("ascii")
            blocks.append({"type": "image", "base64": data, "mime_type": image.mime_type})
        return blocks

    async def run_turn(
        self,
        thread_id: str,
        text: str,
        response: HumanInputResponse | None = None,
        *,
        images: Sequence[ImageInput] = (),
        metadata: Mapping[str, Any] | None = None,
        turn_id: str | None = None,
        on_event: EventSink | None = None,
        speaker: Speaker | None = None,
        attached: bool = False,
    ) -> TurnOutput:
        """Run one turn on ``thread_id``; ``response`` when ``text`` answers a clarification.

        An answer to an interrupt's request resumes the interrupted run (its photos and files, when
        ``attached``, going with it: ``clarigate.agent.answer_attachments``); anything else is the
        next human message. ``metadata`` (platform, …) goes to tracing with the thread id.

        ``turn_id`` names the turn. Called again with the same id (the gateway's job changed
        hands), a turn that stopped midway resumes from its last checkpoint, so steps and tool
        calls that completed are not repeated, and a finished turn gives its output again.

        ``on_event`` is given the run's text as the model streams it and its steps (tools
        started and finished, a question asked) as they happen (``clarigate.agent.events``); a failing
        callback is logged and never fails the run. ``speaker``: ``clarigate.agent.who``.
        """
        from clarigate.agent.observe import RunUsageHandler, usage_by_model

        usage = RunUsageHandler()
        config = self._config(thread_id, metadata, [usage])
        config["configurable"].update(with_speaker(speaker))
        config["run_id"] = run_id = uuid.uuid4()  # the root run's id: feedback on the answer names it
        if turn_id:  # its checkpoints name the turn (``takeover.answer_began``)
            from clarigate.agent.takeover import TURN_KEY  # (the web process never imports it)

            config["metadata"][TURN_KEY] = turn_id
        sent = (text, images) if attached or images else None  # an answer's photos and files
        output = await self._answer_or_message(config, text, response, images, turn_id, on_event, sent)
        spent = usage_by_model(usage.usage_metadata)
        if spent:
            log.info(
                "run tokens: %s",
                ", ".join(f"{m} in={u['input']} out={u['output']}" for m, u in spent.items()),
            )
        return replace(output, usage=spent, run_id=str(run_id))

    async def _answer_or_message(
        self,
        config: dict[str, Any],
        text: str,
        response: HumanInputResponse | None,
        images: Sequence[ImageInput],
        turn_id: str | None,
        on_event: EventSink | None,
        sent: tuple[str, Sequence[ImageInput]] | None = None,
    ) -> TurnOutput:
        """The run's output: the interrupt it answers resumed (``sent``: its text and files, if any),
        else a new message; a run that reaches the recursion limit: the model-calls limit's message."""
        from langgraph.errors import GraphRecursionError

        from clarigate.agent.breakpoints import breakpoint_of
        from clarigate.agent.interrupts import parse_request_id
        from clarigate.agent.limits import limit_message
        from clarigate.agent.paused import answer_breakpoint, asking_to_go_on

        try:
            parsed = parse_request_id(response.request_id) if response is not None else None
            paused = breakpoint_of(response.request_id) if response is not None else None
            output = None
            if parsed is not None and response is not None:
                output = await self._resume(config, parsed, response, on_event, sent)
            elif paused is not None and response is not None:
                output = await answer_breakpoint(
                    self._graph, config, paused, response, self._past(config, on_event)
                )
            if output is None:
                output = await self._new_message(config, text, response, images, turn_id, on_event)
            output = await asking_to_go_on(self._graph, config, output)
        except GraphRecursionError:
            thread_id = config["configurable"]["thread_id"]
            log.warning(
                "run on thread %s reached the recursion limit (%d)", thread_id, self.settings.recursion_limit
            )
            output = TurnOutput(
                replies=[limit_message("model_calls", detect_locale(text))], limit="recursion"
            )
        return output

    async def _new_message(
        self,
        config: dict[str, Any],
        text: str,
        response: HumanInputResponse | None,
        images: Sequence[ImageInput],
        turn_id: str | None = None,
        on_event: EventSink | None = None,
    ) -> TurnOutput:
        from langchain_core.messages import HumanMessage

        from clarigate.agent.protocol.wire import response_kwargs
        from clarigate.agent.supersede import supersede_pending

        human_id = str(uuid.uuid5(TURN_NAMESPACE, turn_id)) if turn_id else str(uuid.uuid4())
        # the thread's state, read once for both looks (a read costs with the thread's history)
        snapshot = await self._graph.aget_state(config)
        earlier = await self._earlier_attempt(config, snapshot, human_id, on_event) if turn_id else None
        if earlier is not None:
            return earlier
        side = {key: value for key, value in config.items() if key != "run_id"}  # not the turn's run
        invoke = lambda command: self._invoke(command, side, None)  # noqa: E731
        before = await supersede_pending(self._graph, side, invoke, snapshot)  # as the turn finds it
        extra = response_kwargs(response) if response is not None else {}
        human = HumanMessage(content=self._content(text, images), id=human_id, additional_kwargs=extra)
        # a checkpoint after every step (``_invoke``); ``prune`` then keeps only the latest one
        result = await self._invoke({"messages": [human]}, config, on_event)
        await self._prune(config)
        messages = result.get("messages", []) if isinstance(result, Mapping) else []
        return asking_first(turn_output(messages, before), result, messages)

    async def _earlier_attempt(
        self, config: dict[str, Any], snapshot: Any, human_id: str, on_event: EventSink | None = None
    ) -> TurnOutput | None:
        """The output of an earlier attempt at this turn (``_went_on``); None when there was none."""
        messages = list(snapshot.values.get("messages", [])) if snapshot and snapshot.values else []
        if not any(message.id == human_id for message in messages):
            return None
        return await self._went_on(config, snapshot, before_turn(messages, human_id), on_event)

    async def _went_on(
        self, config: dict[str, Any], snapshot: Any, before: list[Any], on_event: EventSink | None
    ) -> TurnOutput:
        """The output of an earlier attempt at a turn that found the thread's messages ``before``,
        as the thread's ``snapshot`` shows it: resumed first if it stopped midway (a graph with
        breakpoints is asked to go on instead, as it may have paused on one)."""
        from clarigate.agent.paused import has_breakpoints

        messages = list(snapshot.values.get("messages", [])) if snapshot and snapshot.values else []
        interrupts = list(getattr(snapshot, "interrupts", ()) or ())
        if interrupts:  # it stopped on an interrupt: ask it again
            result: Any = {"__interrupt__": interrupts}
        elif (snapshot.next or snapshot.tasks) and not has_breakpoints(self._graph):
            # cut off midway: go on from there (``tasks`` without ``next``: a step's writes were
            # kept but not its checkpoint; going on records them, so the thread's history has them)
            result, messages = await self._go_on(config, snapshot, on_event)
        else:
            result = {}
        return asking_first(turn_output(messages, before), result, messages)

    async def _go_on(self, config: dict[str, Any], snapshot: Any, on_event: EventSink | None) -> Any:
        """Go on with a run cut off in ``snapshot`` (a tool it was running is not started again
        unless idempotent: ``clarigate.agent.takeover``); its final state and messages."""
        from clarigate.agent.takeover import settle_cut_off_calls

        side = {key: value for key, value in config.items() if key != "run_id"}  # not the turn's run
        await settle_cut_off_calls(self._graph, side, snapshot, self.settings.idempotent_tools)
        result = await self._invoke(None, config, on_event)
        await self._prune(config)
        return result, result.get("messages", []) if isinstance(result, Mapping) else []

    async def _invoke(self, graph_input: Any, config: dict[str, Any], on_event: EventSink | None) -> Any:
        """Run the graph to its end and return its final state (with ``__interrupt__`` when it
        stopped on one); with ``on_event``, report the text and the steps on the way (and the
        graph's own progress lines, ``custom`` mode). The state is the whole of it (``values``
        mode), never what an output schema keeps of it (``ainvoke``'s): the replies are read from
        its messages, which such a schema may leave out.

        "sync" durability: a checkpoint after every step, written before the next step starts,
        so a turn cut off midway resumes there, and a tool starts only once its call is recorded
        (a write that fails stops the run before the tool: its retry runs the tool once).
        """
        from clarigate.agent.events import Asking, RunEvent
        from clarigate.agent.run_events import progress_line, step_events, text_delta

        async def report(event: RunEvent) -> None:
            if on_event is not None:
                await tell(on_event, event)

        context = graph_context(self._graph, config)
        latest: Any = None
        interrupts: list[Any] = []
        modes = ["updates", "values", *(["messages", "custom"] if on_event is not None else [])]
        async for mode, payload in self._graph.astream(
            graph_input, config, context=context, durability="sync", stream_mode=modes
        ):
            if mode == "values":
                latest = payload
            elif mode in ("messages", "custom"):
                shown = text_delta(*payload) if mode == "messages" else progress_line(payload)
                if shown is not None:
                    await report(shown)
            elif isinstance(payload, Mapping):
                if payload.get("__interrupt__") is not None:
                    interrupts.extend(payload["__interrupt__"])
                    await report(Asking())
                    continue
                for event in step_events(payload, self._tool_descriptions):
                    await report(event)
        if interrupts:
            return {**(latest if isinstance(latest, dict) else {}), "__interrupt__": interrupts}
        return latest

    def _past(self, config: dict[str, Any], on_event: EventSink | None) -> Any:
        """Going on past a breakpoint: the graph run without input, its turn what ``before`` (the
        thread's messages where it paused) did not hold."""

        async def go_on(before: Sequence[Any]) -> TurnOutput:
            result = await self._invoke(None, config, on_event)
            await self._prune(config)
            messages = result.get("messages", []) if isinstance(result, Mapping) else []
            return asking_first(turn_output(messages, before), result, messages)

        return go_on

    async def _resume(
        self,
        config: dict[str, Any],
        parsed: tuple[str, str],
        response: HumanInputResponse,
        on_event: EventSink | None = None,
        sent: tuple[str, Sequence[ImageInput]] | None = None,
    ) -> TurnOutput | None:
        """Resume the interrupt ``parsed`` names with the answer and ``sent``; None if not pending."""
        from clarigate.agent.answer_attachments import carried
        from clarigate.agent.dismissals import mark_dismissed
        from clarigate.agent.interrupts import AskAgain, Dismissed, resume_checked, resume_value
        from clarigate.agent.models.conversation import thread_locale
        from clarigate.agent.not_approved import NotApproved, turn_down
        from clarigate.agent.takeover import answer_began, mark_answer

        kind, interrupt_id = parsed
        snapshot = await self._graph.aget_state(config)
        pending = {i.id: i for i in getattr(snapshot, "interrupts", ()) or ()}
        before = list(snapshot.values.get("messages", [])) if snapshot.values else []
        began = answer_began(snapshot, config) if interrupt_id not in pending else None
        if began is not None:  # decided, then cut off after its run began: its output, never run twice
            return await self._went_on(config, snapshot, began, on_event)
        if interrupt_id not in pending and snapshot.next and not pending:
            # decided, then cut off (a crash): go on from the decision, never ask it again
            result, messages = await self._go_on(config, snapshot, on_event)
            return asking_first(turn_output(messages, before), result, messages)
        if interrupt_id not in pending:
            log.warning("the answer is for interrupt %s, which is no longer pending", interrupt_id)
            return None
        asked, locale = pending[interrupt_id], thread_locale(before)
        written = pending_messages(snapshot.tasks)  # what a parallel branch said, shown already
        mark_answer(config, before, written)  # where the turn began, for a replica that takes it over
        value = resume_value(kind, interrupt_id, asked.value, response, locale, asked.response_schema)
        carry = carried(self._graph, before, sent, self._content, locale)
        if isinstance(value, NotApproved):  # no decision turns it down: its calls are answered instead
            turned = await turn_down(self._graph, config, snapshot, {interrupt_id: value.message})
            result = await self._invoke(carry.command(None), config, on_event) if turned else Dismissed()
        else:
            run = lambda command: self._invoke(carry.command(command), config, on_event)  # noqa: E731
            result = await resume_checked(run, asked, value, response, locale)
        if isinstance(result, AskAgain):
            return carry.asked_again(result.output(), locale)
        if isinstance(result, Dismissed):  # closed: never shown as pending again (``dismissals``)
            await mark_dismissed(self._graph, self._checkpointer.saver, config, interrupt_id)
            return TurnOutput(dismissed=True)
        await self._prune(config)
        messages = result.get("messages", []) if isinstance(result, Mapping) else []
        return carry.told(asking_first(turn_output(messages, before, written), result, messages))
