"""The two sides of the adapter boundary.

``GatewayPort`` is what the core offers adapters; ``PlatformAdapter`` is what
each adapter offers the core. Neither side sees the other's internals.

Conversation control is the core's: an adapter maps its platform's command syntax
(Telegram's ``/cancel@bot``, Slack's ``/clarigate cancel``, a Feishu message ``/cancel``)
onto an ``InboundMessage`` whose text is the neutral command (``/new``, ``/cancel``,
``/help``, ``/status``, ``/start``, optionally followed by words), and a Cancel button
onto an ``InboundAnswer`` with ``decline=True``. Conversation control is described in
README.md, "Talking to the bot"; the core's words for it (help, status) name each command
the way the platform spells it in that conversation (``PlatformAdapter.command_spelling``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar, Protocol

from starlette.routing import BaseRoute

from clarigate.agent.protocol.models import Locale
from clarigate.gateway.boundary.outbound_items import FileReply, LiveView, Outbound

from .errors import DeliveryFailed, LiveSkipped, LiveStopped
from .messages import (
    AcceptOutcome,
    AnswerOutcome,
    Attachment,
    Conversation,
    FeedbackOutcome,
    InboundAnswer,
    InboundFeedback,
    InboundMessage,
    MessageRef,
    PendingView,
    Sender,
)
from .settings import PlatformSettings

__all__ = ["AdapterState", "DeliveryFailed", "GatewayPort", "LiveSkipped", "LiveStopped", "PlatformAdapter"]


class AdapterState(Protocol):
    """Small shared state for adapters (wizards, leases), kept by the core's store.

    Keys are namespaced by the core under the bot prefix and the platform, so
    state survives restarts and is shared between replicas.
    """

    async def get_json(self, key: str) -> Any | None:
        """The JSON value at ``key``, or None."""

    async def set_json(self, key: str, value: Any, ttl_seconds: int) -> None:
        """Store a JSON value with an expiry."""

    async def delete(self, key: str) -> None:
        """Remove ``key``."""

    async def acquire_lease(self, name: str, holder: str, ttl_seconds: int) -> bool:
        """Take or renew the lease ``name`` for ``holder``; False if another holds it."""

    async def release_lease(self, name: str, holder: str) -> None:
        """Give the lease up if ``holder`` holds it."""

    async def ping(self) -> bool:
        """True when the store answers (never raises): whether a store outage is over."""


class GatewayPort(Protocol):
    """What an adapter may ask of the core. Every call is fast: safe on the ack path."""

    state: AdapterState

    async def accept(self, message: InboundMessage) -> AcceptOutcome:
        """Dedupe and durably enqueue a message; the reply follows later via ``send``."""

    async def submit_answer(self, answer: InboundAnswer) -> AnswerOutcome:
        """Check and atomically claim an answer; on success the next run is enqueued."""

    async def pending_by_token(self, token: str) -> PendingView | None:
        """The clarification behind a button token, or None if unknown or expired."""

    async def may_answer(
        self, view: PendingView, sender: Sender, *, expect_typing: bool = True
    ) -> AnswerOutcome | None:
        """None if ``sender`` may answer ``view`` now, else the refusal to show.

        Ask it when a person starts answering by a route that ends in typing or filling in
        (``Other…``, ``Fill in``): a yes also tells the core that this person's typed messages
        in the conversation are meant as the question's answer, so a free answer typed after
        "Other…" (Telegram's ForceReply) is taken as the answer, not as a new request.
        ``expect_typing=False`` only asks (a step that ends in a tap, such as a confirmation).
        """

    async def knows_conversation(self, conversation: Conversation) -> bool:
        """True when the bot takes part in this chat thread: it has an agent thread, or a message
        accepted there still waits for its run (which makes the agent thread)."""

    async def withdraw(self, platform: str, event_id: str) -> None:
        """Its writer recalled (deleted) the message whose ``InboundMessage.event_id`` is
        ``event_id``: if its run has not started, it never runs (no reply). Never raises."""

    def stop_run(self, thread_key: str, sender: Sender) -> bool:
        """The person stopped their run on the platform itself (a terminal's Ctrl-C): the chat
        thread's run in this process stops as their ``/cancel`` would; True when one of theirs
        goes on here and is stopping (its "stopped" line follows as a reply)."""

    async def member_left(self, conversation: Conversation, person: Sender) -> int:
        """``person`` left the chat of ``conversation`` (its topic aside), or was removed: each open
        question there that only they may answer closes as their Cancel would (shown closed, the
        agent told), so the group is not held up by it; how many closed. Never raises."""

    async def submit_feedback(self, feedback: InboundFeedback) -> FeedbackOutcome:
        """Record a 👍/👎 click under an answer: one vote per person and answer, a second click
        with the other vote changes it, the same vote again changes nothing."""


class PlatformAdapter(ABC):
    """One chat platform: receive (verify, parse, ack), render (pure), send (SDK calls).

    A platform is found through the registry (``clarigate.gateway.boundary.registry``): the
    built-in ones and every entry point in the group ``clarigate.platforms`` whose value is a
    subclass. Its ``settings_model`` declares its section (YAML and environment), its secrets,
    its credential rule, its identity and its token shapes; the core builds the adapter with
    ``from_settings`` when the platform is on.
    """

    #: The platform's name: its YAML section, ``CLARIGATE_<NAME>__…`` and ``Conversation.platform``.
    platform: ClassVar[str]
    #: The platform's settings (a ``PlatformSettings`` subclass; the base has the access rules only).
    settings_model: ClassVar[type[PlatformSettings]] = PlatformSettings
    #: How a person types a neutral command here, ``{command}`` being ``new``, ``cancel``, …:
    #: ``/{command}`` (Telegram, Feishu, the terminal), ``/clarigate {command}`` (a Slack slash
    #: command). The core's help and status texts name commands with it (``command_spelling``).
    command_syntax: ClassVar[str] = "/{command}"

    @classmethod
    def from_settings(cls, settings: Any, gateway: GatewayPort) -> PlatformAdapter:
        """The adapter of a platform that is on, from its section (by default ``cls(settings, gateway)``)."""
        return cls(settings, gateway)  # type: ignore[call-arg]

    def routes(self) -> list[BaseRoute]:
        """HTTP routes to mount on the gateway's server (webhook mode)."""
        return []

    async def start(self) -> None:  # noqa: B027 (optional hook: webhook-only adapters need none)
        """Check credentials and open the clients sending needs (every process that has the adapter)."""

    async def complete_message(self, message: InboundMessage) -> InboundMessage | None:
        """Finish what the ack left out, where the job runs, before the agent reads the message
        (Slack: the names of ``unnamed_mentions``; Feishu: the sender's name; Telegram: an album's
        other items). None: another message took this one in (no reply, nothing runs). Bounded in
        time; on any failure the message goes on as it is. By default it is returned unchanged."""
        return message

    async def complete_sender(self, sender: Sender) -> Sender:
        """An answer's sender (a click, a form) completed as ``complete_message`` completes a
        message's, where the answer's job runs, before the agent's run resumes: the same name
        that person's messages carry (Slack, Feishu). By default ``sender`` unchanged."""
        return sender

    async def known_thread(self, message: InboundMessage) -> bool:
        """Whether the bot takes part in the thread of a message marked ``only_in_known_thread``
        by the platform's own record (Slack: someone called it into the thread by a bare mention),
        asked where the job runs when the thread has no agent thread. False drops the message
        without a word: the adapter counts it as it counts what it ignores on arrival. By default
        False (an agent thread is the only sign)."""
        return False

    def command_spelling(self, conversation: Conversation, name: str) -> str:
        """How a person types neutral command ``name`` (``new``, ``cancel``, …) in ``conversation``,
        as every line of the core that names a command writes it (help, status, a
        question's way out). By default ``command_syntax``; a platform whose commands are typed differently
        in some conversations says so here (Slack: the slash command in a DM, a mention of the
        bot in a channel's threads, where Slack takes no slash command)."""
        return self.command_syntax.format(command=name)

    def how_to_talk(self, conversation: Conversation, locale: Locale) -> str | None:
        """The first paragraph of ``/help`` (and ``/start``) in ``conversation`` where the core's
        "just write what you need" is not how it works there (a Telegram group in privacy mode
        sees only ``/ask@bot …`` and replies); None for the core's words."""
        return None

    def own_commands(self, conversation: Conversation) -> tuple[str, ...]:
        """Commands the platform handles itself, listed by ``/help`` after the core's (with their
        catalog descriptions, ``cmd_<name>``): the terminal's ``quit``. By default none."""
        return ()

    def still_starting(self) -> str | None:
        """What ``/readyz`` says for the platform while something ``start`` left running in the
        background (loading the platform's SDK, learning the bot's identity) is not done yet:
        ``"starting"``, or ``"starting (why)"`` when there is more to say (a call that failed and
        is made again), or ``"failed (why)"`` when it cannot be done for now (the platform's
        credentials refused: the adapter may check again in the background). Either way
        ``/readyz`` stays 200 while another configured platform works (see
        ``gateway.web.readiness``); webhooks are taken all the same. ``"degraded (why)"``: it
        works, although part of it does not answer (named, the replica ready on it alone). None
        once done, and by default."""
        return None

    async def start_receiving(self) -> None:  # noqa: B027 (optional hook: webhooks need none)
        """Start taking messages in: a long-lived receiver (Socket Mode, long connection,
        polling) or the webhook's registration. Called after ``start`` in the processes that
        receive (``role`` all or web), never in a worker process, which only sends: a second
        receiver there would take events the web process should ack, or fight it for a lease."""

    async def stop(self) -> None:  # noqa: B027 (optional hook)
        """Stop receivers and close clients."""

    async def connection_up(self) -> bool | None:
        """Whether a receiver this adapter started (Socket Mode, long connection, poller) runs;
        None when it started none (webhooks, a worker process). Read for ``/healthz`` and the
        metrics."""
        return None

    async def check(self) -> list[str]:
        """Problems with this platform's configuration or credentials, for ``doctor``."""
        return []

    @abstractmethod
    async def send(self, conversation: Conversation, item: Outbound) -> MessageRef | None:
        """Deliver one outbound item; returns a reference when a message was created.

        Platform errors are raised as ``DeliveryFailed`` (transient or permanent).
        """

    async def already_delivered(
        self, conversation: Conversation, item: Outbound, since: float
    ) -> MessageRef | bool | None:
        """Whether ``item`` (by its ``delivery_id``) is shown in ``conversation`` already, asked
        before an item whose delivery the store cannot prove is sent again (a job taken over
        from a dead worker, or read again after a store outage). ``since``: unix time the item
        was recorded (nothing older can be it). True, or the ``MessageRef`` of the message that
        shows it (a question's is remembered, to update it once answered): found, not sent again;
        False: not there; None (the default): this platform cannot tell, so the item is sent."""
        return None

    # --- live messages: a run's answer streamed while it is written, and its steps -------------
    #
    # The core (``clarigate.gateway.flow.live``) calls ``show_live`` at most once per ``live_interval``
    # seconds while a run goes on: first with ``ref`` None (create the message: the platform's
    # native stream where it has one), then with the ref it returned. The run's recorded reply
    # then finishes that message (``TextReply.live``), or ``LiveEnd`` closes it. A failing
    # ``show_live`` stops the updates for that run; the reply is delivered all the same.

    def live_mode(self, conversation: Conversation) -> str | None:
        """How a run is shown live in ``conversation``: a name of the adapter's choosing (the
        platform's native stream, drafts, a streaming card, or edits of one message), or None for
        no live message (the default: "Working…" only, as ``ProgressUpdate``)."""
        return None

    def live_interval(self, conversation: Conversation, mode: str) -> float:
        """Seconds between two updates of a live message in ``mode``: inside the platform's
        documented rate limits, so the number of calls grows with a run's time, not its tokens."""
        return 1.0

    async def show_live(
        self, conversation: Conversation, view: LiveView, ref: MessageRef | None
    ) -> MessageRef | None:
        """Create (``ref`` None) or update the live message of a run; returns its reference.

        Errors are raised as ``DeliveryFailed`` (the core stops updating this run's message); an
        update the platform's budget has no room for now as ``LiveSkipped`` (the core tries the
        run's first words again at the next slot, and lets a later update's text wait for the next);
        a message the person stopped on the platform as ``LiveStopped`` (the core stops the run).
        """
        raise DeliveryFailed(f"{self.platform} shows no live messages", permanent=True)

    async def live_over(self, conversation: Conversation, ref: MessageRef) -> None:  # noqa: B027 (optional)
        """This replica makes no more updates of the live message ``ref`` (its run ended, was
        stopped or handed over): stop whatever keeps it up here (a typing indicator, a draft sent
        again). The reply that finishes it, or another replica, comes next."""

    async def fetch_attachment(self, attachment: Attachment, max_bytes: int) -> bytes | None:
        """The bytes of an attachment this adapter received (called by a worker, never on the ack
        path); None when it cannot be had or is larger than ``max_bytes`` (or, where the adapter
        can tell, ``AttachmentTooLarge`` for the latter, so the person can be told)."""
        return None

    # --- files the agent sends -----------------------------------------------------------------

    def file_limit(self, conversation: Conversation, item: FileReply) -> int:
        """The largest file like ``item`` (an image, a file of its type) that ``send_file`` can
        deliver in ``conversation``, in bytes; 0 when the platform cannot send files (the
        default). The core refuses a larger file with a short text instead of sending it."""
        return 0

    async def send_file(self, conversation: Conversation, item: FileReply) -> MessageRef | None:
        """Deliver a file the agent sends, natively (an upload into the conversation's thread).

        A retry of the same item (same ``delivery_id``) must not show the file twice: remember
        the steps already done (an upload's id) in ``GatewayPort.state`` under the delivery id.
        Errors are raised as ``DeliveryFailed``; by default the platform cannot send files.
        """
        raise DeliveryFailed(f"{self.platform} cannot send files", permanent=True, code="files_unsupported")
