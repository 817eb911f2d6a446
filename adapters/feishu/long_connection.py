"""Long connection mode: ``lark.ws.Client`` in its own thread, events handed to the core's loop.

The ws client keeps a module-level event loop and ``start()`` blocks forever, so
it lives in a daemon thread with a loop of its own. It calls the handlers
registered on an ``EventDispatcherHandler`` synchronously; they convert the SDK's
typed event back to the plain dict the webhook path sees and run
``FeishuReceiver.handle`` on the core's loop, waiting for the answer (card
callbacks need their reply) within Feishu's 3 seconds. lark-oapi is imported in that thread,
not with this module (seconds of CPU the web process does not spend before its port opens).

An event type the app is subscribed to but nothing here handles (no processor in the SDK's
dispatcher, which the ws client answers 500, "processor not found") is acknowledged in the ws
thread by ``Dispatcher``, counted as "other" as on the webhook and named once per type.

A handler that raises makes the ws client answer the frame with code 500, and Feishu pushes
the event again (as it does for a webhook not answered 200). An event the store (Redis) cannot
take is answered so (``NotTaken``): one WARNING per outage, and the SDK's own line for each such
frame is left out. A group message mentioning someone while the bot's identity is not known yet
(``identity.IdentityUnknown``) is answered 500 the same way, for Feishu to push again once it may
be known (said once by the receiver). Any other failure is a bug: logged here with its traceback,
answered 500 too.

A card callback the core is slow to answer is answered in time all the same, by the receiver
(``card_updates``). A message the core has not taken within ``HANDLER_TIMEOUT_SECONDS`` is
answered 500 too (``NotInTime``, one WARNING of ours): it goes on in the core, and Feishu's push
again is deduplicated there (by ``message_id``, in the store's one accept step), so it runs once;
had it failed, the push again is what brings it in.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from clarigate.adapters.feishu.settings import FeishuSettings
from clarigate.gateway.boundary import surrogates
from clarigate.gateway.boundary.outage import Ping, StoreOutage
from clarigate.gateway.runtime.metrics import INBOUND_EVENTS

from .identity import IdentityUnknown
from .lark_sdk import load_sdk
from .receive import CARD_ACTION_EVENT, MESSAGE_EVENT, PLATFORM, FeishuReceiver

if TYPE_CHECKING:
    import lark_oapi as lark
    from lark_oapi.event.callback.model.p2_card_action_trigger import (
        P2CardActionTrigger,
        P2CardActionTriggerResponse,
    )

log = logging.getLogger(__name__)

#: Feishu waits 3 s for an answer; leave room for the frame to travel back.
HANDLER_TIMEOUT_SECONDS = 2.5
#: Documented events an app may be subscribed to besides messages (im.message.*, im.chat.*, the
#: bot's menu): the ws client answers an event with no handler 500 ("processor not found") and
#: Feishu pushes it again; these are answered 200 and counted as "other", as on the webhook.
OTHER_EVENTS = (
    "im.message.message_read_v1",
    "im.message.recalled_v1",
    "im.message.reaction.created_v1",
    "im.message.reaction.deleted_v1",
    "im.chat.updated_v1",
    "im.chat.disbanded_v1",
    "im.chat.member.bot.added_v1",
    "im.chat.member.bot.deleted_v1",
    "im.chat.member.user.added_v1",
    "im.chat.member.user.deleted_v1",
    "im.chat.member.user.withdrawn_v1",
    "im.chat.access_event.bot_p2p_chat_entered_v1",
    "application.bot.menu_v6",
)
#: The logger lark-oapi writes to (its ws client's line for each frame a handler failed).
SDK_LOGGER = "Lark"


class NotTaken(Exception):
    """An event the store could not take: raised to the ws client, which answers the frame 500."""

    WORDS = "not taken, the store is unreachable: Feishu pushes it again"

    def __init__(self) -> None:
        super().__init__(self.WORDS)


class NotInTime(Exception):
    """An event the core had not taken when Feishu's answer was due: answered 500 (pushed again)."""

    WORDS = "not taken in time: Feishu pushes it again, the core takes it once"

    def __init__(self) -> None:
        super().__init__(self.WORDS)


class _OnceIsEnough(logging.Filter):
    """Leaves out the SDK's line for a frame answered 500 with ``NotTaken``, ``NotInTime`` or
    ``IdentityUnknown``: the outage is said once, by ``StoreOutage``, a slow event by our own
    warning, a message left for later by the receiver (once until the bot's identity is known)."""

    def filter(self, record: logging.LogRecord) -> bool:
        said = record.getMessage()
        return not any(words in said for words in (NotTaken.WORDS, NotInTime.WORDS, IdentityUnknown.WORDS))


_ONCE_IS_ENOUGH = _OnceIsEnough()


class Dispatcher:
    """lark-oapi's dispatcher with a catch-all, for the ws client (which calls only
    ``_do_without_validation`` on it, once per event frame, and answers 500 when it raises). The
    SDK has no default handler: a type nobody registered raises "processor not found", and Feishu
    pushes the event again for hours. Such a type goes to ``unlisted`` instead (answered 200)."""

    LISTED = frozenset((MESSAGE_EVENT, CARD_ACTION_EVENT, *OTHER_EVENTS))

    def __init__(self, sdk: lark.EventDispatcherHandler, unlisted: Callable[[str], None]) -> None:
        self.sdk = sdk
        self.unlisted = unlisted

    def _do_without_validation(self, payload: bytes) -> Any:
        try:
            header = json.loads(payload).get("header")
        except (ValueError, AttributeError):
            header = None
        kind = header.get("event_type") if isinstance(header, dict) else None
        if not isinstance(kind, str) or kind in self.LISTED:
            return self.sdk._do_without_validation(payload)  # unreadable ones fail there, as before
        self.unlisted(kind)
        return None


def as_payload(event: Any) -> dict[str, Any]:
    """An SDK event object as the event dict the webhook receives."""
    from lark_oapi.core.json import JSON

    payload = surrogates.loads(JSON.marshal(event) or "{}")  # a lone surrogate made U+FFFD
    return payload if isinstance(payload, dict) else {}


class LongConnection:
    """Receives events over Feishu's websocket and hands them to the shared receiver."""

    def __init__(self, settings: FeishuSettings, receiver: FeishuReceiver, ping: Ping) -> None:
        self.settings = settings
        self.receiver = receiver
        self.core_loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ws_loop: asyncio.AbstractEventLoop | None = None
        self._stopped = threading.Event()
        self._unlisted: set[str] = set()  # the unlisted event types named in the log so far
        # an event handled as usual may not have reached the store (one nobody wants): the store's
        # PING says when an outage is over
        self.outage = StoreOutage(
            ping,
            log=log,
            while_down="Feishu events are answered 500 for Feishu to push again",
            when_back="Feishu events are taken as usual",
        )
        logging.getLogger(SDK_LOGGER).addFilter(_ONCE_IS_ENOUGH)  # added once, however often

    def dispatcher(self) -> Dispatcher:
        """The handler the ws client calls: messages, card callbacks and ``OTHER_EVENTS`` through
        the SDK's dispatcher, any other event type acknowledged by ``on_unlisted``."""
        import lark_oapi as lark

        builder = lark.EventDispatcherHandler.builder("", "")
        for event_type in (MESSAGE_EVENT, *OTHER_EVENTS):
            builder.register_p2_customized_event(event_type, self.on_event)
        sdk = builder.register_p2_card_action_trigger(self.on_card_action).build()
        return Dispatcher(sdk, self.on_unlisted)

    def on_unlisted(self, event_type: str) -> None:
        """An event type the app is subscribed to that nothing here handles (ws thread): counted
        as "other" (as on the webhook) and acknowledged without the core; named once per type."""
        INBOUND_EVENTS.labels(PLATFORM, "other").inc()
        if event_type not in self._unlisted:
            self._unlisted.add(event_type)
            log.info("feishu: %s events are acknowledged and not handled", event_type)

    def on_event(self, event: lark.CustomizedEvent) -> None:
        """An event (ws thread), handled by the receiver before Feishu gets its ack: a message
        accepted by the core, any other event counted."""
        self._run(as_payload(event))

    def on_card_action(self, event: P2CardActionTrigger) -> P2CardActionTriggerResponse:
        """A card callback (ws thread): the toast and updated card travel back in the ack."""
        from lark_oapi.event.callback.model.p2_card_action_trigger import P2CardActionTriggerResponse

        reply = self._run(as_payload(event))
        return P2CardActionTriggerResponse(reply or {})

    def _run(self, payload: dict[str, Any]) -> dict[str, Any] | None:
        if self.core_loop is None:
            raise RuntimeError("the long connection has not been started")
        future = asyncio.run_coroutine_threadsafe(self._handle(payload), self.core_loop)
        try:
            return future.result(timeout=HANDLER_TIMEOUT_SECONDS)
        except TimeoutError:
            if future.done():  # the core's own timeout (said by ``_handle``), not ours
                raise
            header = payload.get("header")
            kind = header.get("event_type") if isinstance(header, dict) else None
            log.warning("feishu: a %s event was %s", kind, NotInTime.WORDS)
            raise NotInTime() from None

    async def _handle(self, payload: dict[str, Any]) -> dict[str, Any] | None:
        """The receiver's answer (on the core's loop); a failure is raised to the ws client, which
        answers the frame 500 so that Feishu pushes the event again."""
        try:
            reply = await self.receiver.handle(payload)
        except IdentityUnknown:
            raise  # said by the receiver (once until the identity is known): answered 500 too
        except Exception as error:
            if self.outage.met("feishu: an event answered 500", error):
                raise NotTaken() from None
            log.error("feishu: an event from the long connection failed", exc_info=error)
            raise
        await self.outage.answered()  # an event was handled: an outage (if any) is over once PING answers
        return reply

    def start(self, core_loop: asyncio.AbstractEventLoop) -> None:
        """Connect in a daemon thread; events run on ``core_loop``."""
        self.core_loop = core_loop
        self._stopped.clear()
        self._thread = threading.Thread(target=self._serve, name="feishu-long-connection", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        # The SDK grabs a loop when first imported (the importing thread's, or a new one); give
        # the client a fresh loop owned by this thread instead.
        loop = self._ws_loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            client = self._client(loop)  # lark-oapi's import: seconds, in this thread
            if not self._stopped.is_set():
                client.start()
        except RuntimeError:
            pass  # the loop was stopped by stop()
        except Exception:
            log.exception("feishu long connection failed: no Feishu events arrive until the gateway restarts")
        finally:
            _close(loop)

    def _client(self, loop: asyncio.AbstractEventLoop) -> lark.ws.Client:
        load_sdk()
        import lark_oapi as lark
        import lark_oapi.ws.client as ws_client

        ws_client.loop = loop
        secret = self.settings.app_secret.get_secret_value() if self.settings.app_secret else ""
        return lark.ws.Client(
            self.settings.app_id or "",
            secret,
            event_handler=self.dispatcher(),
            domain=self.settings.domain.rstrip("/"),
            log_level=lark.LogLevel.WARNING,
        )

    def stop(self, timeout: float = 2.0) -> None:
        """Stop the ws loop and let the thread end (it is a daemon either way)."""
        self._stopped.set()
        if self._ws_loop is not None and self._ws_loop.is_running():
            with contextlib.suppress(RuntimeError):  # closed meanwhile: the thread is ending
                self._ws_loop.call_soon_threadsafe(self._ws_loop.stop)
        if self._thread is not None:
            self._thread.join(timeout)
        self._thread = None


def _close(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what the SDK left on its loop (its cache's clean-up, its pings) and close the loop."""
    pending = asyncio.all_tasks(loop)
    for task in pending:
        task.cancel()
    with contextlib.suppress(RuntimeError):  # stopped by stop() meanwhile
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    loop.close()
