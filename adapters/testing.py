"""An in-memory platform for tests and benchmarks: talk to the whole gateway as a user would.

adapter = TestAdapter(gateway)
gateway.register(adapter)
await gateway.start()
await adapter.say("deploy the app")
await gateway.drain()
request = adapter.last_request()          # the ClarificationOut the user saw
await adapter.click(0)                    # first option (or an option id)
await gateway.drain()
assert adapter.texts()[-1] == "Deployed."

Conversation control as a person uses it: ``await adapter.cancel()`` clicks the latest
question's Cancel button; ``await adapter.say("/status")`` (``/new``, ``/cancel``, ``/help``,
``/start``) types a command.
"""

from __future__ import annotations

import inspect
import itertools
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from clarigate.agent.harness import ImageInput, TurnOutput
from clarigate.agent.protocol import FormField, HumanInputRequest, HumanInputResponse, Option, ui_text
from clarigate.agent.who import Speaker
from clarigate.gateway.boundary.messages import (
    AcceptOutcome,
    AnswerOutcome,
    Attachment,
    Conversation,
    InboundAnswer,
    InboundMessage,
    MessageRef,
    Sender,
)
from clarigate.gateway.boundary.outbound_items import (
    ClarificationClosed,
    ClarificationOut,
    ErrorReply,
    LiveView,
    Outbound,
    ProgressUpdate,
    TextReply,
)
from clarigate.gateway.boundary.port import GatewayPort, PlatformAdapter
from clarigate.gateway.runners.base import AgentRunner, RunInput


class TestAdapter(PlatformAdapter):
    """Platform ``test``: ``say``/``click``/``submit``/``reply`` go in, ``sent`` records what came out."""

    __test__ = False  # not a pytest test class
    platform: ClassVar[str] = "test"

    @classmethod
    def from_settings(cls, settings: Any, gateway: GatewayPort) -> Self:
        """Built by the registry (``extra_adapters``): it needs no settings of its own."""
        return cls(gateway)

    def __init__(
        self, gateway: GatewayPort, workspace: str = "w1", *, live: bool = False, live_interval: float = 0.05
    ) -> None:
        self.gateway = gateway
        self.workspace = workspace
        # ``live``: runs are shown live ("edit" mode); ``shown`` records every ``show_live`` view
        self.live = live
        self.interval = live_interval
        self.shown: list[tuple[MessageRef | None, LiveView]] = []
        self.over: list[MessageRef] = []  # ``live_over`` calls
        self.sent: list[tuple[Conversation, Outbound]] = []
        self.refs: list[MessageRef | None] = []  # what ``send`` returned, parallel to ``sent``
        self.answers: list[AnswerOutcome] = []
        self._ids = itertools.count(1)
        self._instance = uuid.uuid4().hex[:8]  # event ids unique across adapters sharing a store
        self._last_conversation: Conversation | None = None
        self._last_user = "u1"
        # each question by its token, and the conversation it was shown in by request id
        self._questions: dict[str, ClarificationOut] = {}
        self._shown_in: dict[str, Conversation] = {}
        # attachment bytes by ``Attachment.ref`` (``fetch_attachment`` serves them; ``fetched`` records)
        self.files: dict[str, bytes] = {}
        self.fetched: list[str] = []

    # --- what a user does -------------------------------------------------------------------

    def conversation(self, chat: str = "c1", topic: str | None = None, direct: bool = True) -> Conversation:
        """The conversation a message to ``chat`` (and ``topic``) belongs to."""
        return Conversation(
            platform=self.platform,
            workspace=self.workspace,
            chat_id=chat,
            topic=topic,
            is_direct=direct,
            chat_type="private" if direct else "group",
        )

    async def say(
        self,
        text: str,
        user: str = "u1",
        chat: str = "c1",
        topic: str | None = None,
        direct: bool = True,
        event_id: str | None = None,
        name: str | None = None,
        language: str | None = None,
        attachments: list[Attachment] | None = None,
    ) -> AcceptOutcome:
        """Write ``text`` to the bot; ``event_id`` repeats a delivery (to test dedupe).

        ``language`` is the person's interface language as a platform would report it.
        ``attachments`` come with it; put their bytes in ``files`` under their ``ref``.
        """
        conv = self.conversation(chat, topic, direct)
        self._last_conversation, self._last_user = conv, user
        n = next(self._ids)
        message = InboundMessage(
            conversation=conv,
            sender=Sender(user_id=user, display_name=name),
            text=text,
            event_id=event_id or f"ev-{self._instance}-{n}",
            message_id=f"m-{n}",
            is_mention=not direct,
            language=language,
            attachments=attachments or [],
        )
        return await self.gateway.accept(message)

    async def reply(self, text: str, user: str | None = None) -> AcceptOutcome:
        """Type ``text`` into the last conversation (e.g. a typed answer to a question)."""
        conv = self._last_conversation or self.conversation()
        return await self.say(text, user or self._last_user, conv.chat_id, conv.topic, conv.is_direct)

    async def click(
        self,
        option: int | str,
        user: str | None = None,
        token: str | None = None,
        event_id: str | None = None,
    ) -> AnswerOutcome:
        """Click an option (index into the latest request's options, or its id)."""
        out = self._request_out(token)
        option_id = out.request.options[option].id if isinstance(option, int) else option
        return await self._answer(out, user, event_id, option_id=option_id)

    async def submit(
        self,
        values: dict[str, Any],
        user: str | None = None,
        token: str | None = None,
        event_id: str | None = None,
    ) -> AnswerOutcome:
        """Submit form ``values`` for the latest request (raw strings/lists, as a platform sends them)."""
        return await self._answer(self._request_out(token), user, event_id, values=values)

    async def answer_text(
        self, text: str, user: str | None = None, token: str | None = None, event_id: str | None = None
    ) -> AnswerOutcome:
        """Answer the latest request through its "Other…" box."""
        return await self._answer(self._request_out(token), user, event_id, text=text)

    async def cancel(
        self, user: str | None = None, token: str | None = None, event_id: str | None = None
    ) -> AnswerOutcome:
        """Click the Cancel button of the latest request (or of the one with ``token``)."""
        return await self._answer(self._request_out(token), user, event_id, decline=True)

    # --- what the user saw ------------------------------------------------------------------

    def clear(self) -> None:
        """Forget everything sent and answered so far (a long benchmark keeps its memory flat)."""
        self.sent.clear()
        self.refs.clear()
        self.answers.clear()
        self._questions.clear()
        self._shown_in.clear()

    def requests(self) -> list[ClarificationOut]:
        """Every clarification request sent, oldest first."""
        return [item for _, item in self.sent if isinstance(item, ClarificationOut)]

    def last_request(self) -> ClarificationOut:
        """The latest clarification request (``LookupError`` if none)."""
        found = self.requests()
        if not found:
            raise LookupError("no clarification request was sent")
        return found[-1]

    def texts(self, chat: str | None = None) -> list[str]:
        """Texts of replies and errors, oldest first (optionally for one chat)."""
        return [
            item.text
            for conv, item in self.sent
            if isinstance(item, TextReply | ErrorReply) and (chat is None or conv.chat_id == chat)
        ]

    def of_kind(self, kind: str) -> list[Outbound]:
        """Items of one ``kind`` ("text", "clarification", "closed", "progress", "error")."""
        return [item for _, item in self.sent if item.kind == kind]

    def closed(self) -> list[ClarificationClosed]:
        """Notices that a clarification was closed by a message (a typed answer, /cancel, /new, …)."""
        return [item for _, item in self.sent if isinstance(item, ClarificationClosed)]

    def buttons(self, token: str | None = None) -> list[str]:
        """The buttons this platform shows on the latest question (or the one with ``token``).

        Like every platform: its options, "Other…" (choices) or "Fill in" (forms), and always
        a Cancel that dismisses the question (``cancel``).
        """
        request = self._request_out(token).request
        locale = request.locale
        labels = [option.label for option in request.options]
        if request.input_mode == "choice_with_other":
            labels.append(ui_text("other", locale))
        elif request.input_mode == "form":
            labels.append(ui_text("fill_in", locale))
        return [*labels, ui_text("cancel", locale)]

    # --- PlatformAdapter ----------------------------------------------------------------------

    async def send(self, conversation: Conversation, item: Outbound) -> MessageRef | None:
        """Record the item; messages get a reference like a platform would return."""
        self.sent.append((conversation, item))
        if isinstance(item, ClarificationOut):
            self._questions[item.token] = item
            self._shown_in.setdefault(item.request.request_id, conversation)
        ref = None
        if not (isinstance(item, ProgressUpdate) and item.state == "done"):
            ref = MessageRef(
                platform=self.platform, chat_id=conversation.chat_id, message_id=f"out-{next(self._ids)}"
            )
        self.refs.append(ref)
        return ref

    def live_mode(self, conversation: Conversation) -> str | None:
        """ "edit" when made with ``live=True``, else no live messages."""
        return "edit" if self.live else None

    def live_interval(self, conversation: Conversation, mode: str) -> float:
        """``live_interval`` as given (short, for tests)."""
        return self.interval

    async def live_over(self, conversation: Conversation, ref: MessageRef) -> None:
        """Record that the run's updates are over."""
        self.over.append(ref)

    async def show_live(
        self, conversation: Conversation, view: LiveView, ref: MessageRef | None
    ) -> MessageRef | None:
        """Record the view; the first makes a message."""
        self.shown.append((ref, view))
        if ref is not None:
            return ref
        return MessageRef(
            platform=self.platform, chat_id=conversation.chat_id, message_id=f"live-{next(self._ids)}"
        )

    async def fetch_attachment(self, attachment: Attachment, max_bytes: int) -> bytes | None:
        """The bytes put in ``files`` for the attachment's ref (None if unknown or too large)."""
        self.fetched.append(attachment.ref)
        data = self.files.get(attachment.ref)
        return data if data is not None and len(data) <= max_bytes else None

    # --- internals --------------------------------------------------------------------------

    def _request_out(self, token: str | None) -> ClarificationOut:
        if token is None:
            return self.last_request()
        if token in self._questions:
            return self._questions[token]
        # an unknown token is still submitted: the gateway decides (expired)
        return self.last_request().model_copy(update={"token": token})

    async def _answer(
        self, out: ClarificationOut, user: str | None, event_id: str | None, **what: Any
    ) -> AnswerOutcome:
        conv = self._conversation_of(out)
        answer = InboundAnswer(
            sender=Sender(user_id=user or self._last_user),
            event_id=event_id or f"act-{self._instance}-{next(self._ids)}",
            token=out.token,
            conversation=conv,
            **what,
        )
        outcome = await self.gateway.submit_answer(answer)
        self.answers.append(outcome)
        return outcome

    def _conversation_of(self, out: ClarificationOut) -> Conversation | None:
        """Where ``out`` was shown (by request id: an unknown-token copy still came from there)."""
        return self._shown_in.get(out.request.request_id)


# --- a scripted agent ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    """One call the runner received."""

    thread_id: str
    text: str
    response: HumanInputResponse | None
    images: tuple[ImageInput, ...] = ()
    speaker: Speaker | None = None  # who is talking, where (``clarigate.agent.who``)


Script = Callable[[Turn], "TurnOutput | Awaitable[TurnOutput]"]


def echo(turn: Turn) -> TurnOutput:
    """The default script: reply with what was said (or answered)."""
    return TurnOutput(replies=[f"You said: {turn.text}"])


class ScriptedRunner(AgentRunner):
    """An ``AgentRunner`` whose turns come from ``script``; records every call in ``calls``."""

    def __init__(self, script: Script = echo) -> None:
        self.script = script
        self.calls: list[Turn] = []
        self.healthy = True
        self.deleted: list[str] = []  # threads deleted (``delete_thread``)

    async def run_turn(self, run: RunInput) -> TurnOutput:
        """Record the turn and play the script."""
        turn = Turn(run.thread_id, run.text, run.response, tuple(run.images), run.speaker)
        self.calls.append(turn)
        result = self.script(turn)
        return await result if inspect.isawaitable(result) else result

    async def delete_thread(self, thread_id: str) -> None:
        """Record the deletion of an abandoned thread."""
        self.deleted.append(thread_id)

    async def ping(self) -> bool:
        """``healthy`` (tests flip it to see ``/readyz`` fail)."""
        return self.healthy

    async def aclose(self) -> None:
        """Nothing to release."""


def choice_request(question: str, options: list[str], request_id: str | None = None) -> HumanInputRequest:
    """A ``choice_with_other`` request with options ``option-1``…"""
    rid = request_id or f"clarification:call-{uuid.uuid4().hex[:8]}"
    return HumanInputRequest(
        request_id=rid,
        tool_call_id=rid.split(":", 1)[-1],
        clarification_type="approach_choice",
        question=question,
        input_mode="choice_with_other",
        options=[Option(id=f"option-{i}", label=label, value=label) for i, label in enumerate(options, 1)],
    )


def text_request(question: str, request_id: str | None = None) -> HumanInputRequest:
    """A ``free_text`` request: any typed text answers it."""
    rid = request_id or f"clarification:call-{uuid.uuid4().hex[:8]}"
    return HumanInputRequest(
        request_id=rid, tool_call_id=rid.split(":", 1)[-1], question=question, input_mode="free_text"
    )


def form_request(question: str, fields: list[FormField], request_id: str | None = None) -> HumanInputRequest:
    """A ``form`` request with ``fields``."""
    rid = request_id or f"clarification:call-{uuid.uuid4().hex[:8]}"
    return HumanInputRequest(
        request_id=rid,
        tool_call_id=rid.split(":", 1)[-1],
        question=question,
        input_mode="form",
        fields=fields,
    )


def asking(request: HumanInputRequest, replies: list[str] | None = None) -> TurnOutput:
    """A turn that ends with ``request``."""
    return TurnOutput(replies=replies or [], request=request, fallback_text=request.question)
