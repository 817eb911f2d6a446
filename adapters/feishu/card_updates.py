"""Clicked cards replaced through the open API after the callback was answered, kept until they land.

Feishu wants a card callback answered within 3 s, webhook and long connection alike; past that
the person sees Feishu's error although the click goes on in the core and counts, and the card
the answer carried is lost. So a click waits ``CALLBACK_WAIT_SECONDS`` at most for the core
(``in_time``): then it is answered with a neutral toast saying it is being handled, in the card's
language, and the card of the core's later reply is put in place through the open API; a late
reply's failure is logged. An old-style callback's card goes the same way (``legacy``: its answer
carries a toast or a card, not both). The updates of one card land in the order of the clicks,
and the adapter's stop waits for those under way (``settle``), a few seconds at most, so that a
card about to be replaced is not left stale.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from clarigate.agent.protocol import ui_text
from clarigate.agent.protocol.models import Locale
from clarigate.gateway.boundary.messages import Conversation, MessageRef
from clarigate.gateway.boundary.outage import unreachable

log = logging.getLogger(__name__)

#: Replaces the card of a message the bot sent (``FeishuSender.update_card``).
CardUpdate = Callable[[str, dict[str, Any]], Awaitable[None]]
#: Says a click's late refusal (its text) to the person who clicked (``FeishuReceiver.tell_late``).
Tell = Callable[[str], Awaitable[None]]

#: How long a callback waits for the core's reply (Feishu wants it within 3 s; the long
#: connection's own limit, ``HANDLER_TIMEOUT_SECONDS``, is 2.5 s).
CALLBACK_WAIT_SECONDS = 2.0
#: The whole answer to a callback, the core's part and the open API's (``legacy``), with room
#: left within Feishu's 3 s for the answer to travel back.
ANSWER_SECONDS = 2.5
#: The kinds of toast that refuse a click (the card stays as it was).
REFUSALS = ("warning", "error")
#: How long the adapter's stop waits for the late replies and card updates under way.
SETTLE_SECONDS = 5.0


def pending_toast(locale: str) -> dict[str, Any]:
    """The answer to a click the core has not finished with: it is being handled (info), in
    ``locale`` (the card's language, ``l`` in its callback values; English when unknown)."""
    language: Locale = "zh" if locale == "zh" else "en"
    return {"toast": {"type": "info", "content": ui_text("click_pending", language)}}


def clicked_card(event: dict[str, Any]) -> tuple[str, str]:
    """A card callback's clicked message (``context.open_message_id``) and the card's language
    (``l`` in the clicked part's value); "" where the callback does not say."""
    context, action = event.get("context"), event.get("action")
    value = action.get("value") if isinstance(action, dict) else None
    message_id = context.get("open_message_id") if isinstance(context, dict) else None
    language = value.get("l") if isinstance(value, dict) else None
    return str(message_id or ""), str(language or "")


def clicked_conversation(event: dict[str, Any], platform: str) -> Conversation | None:
    """Where a click's card is, for a note about a click no question is behind (a 👍/👎, a question
    gone): replying to the card in its chat (``context.open_chat_id``), in a group in its thread;
    None when the callback does not say."""
    context = event.get("context")
    chat_id = context.get("open_chat_id") if isinstance(context, dict) else None
    message_id, _ = clicked_card(event)
    if not (isinstance(chat_id, str) and chat_id and message_id):
        return None
    return Conversation(platform=platform, chat_id=chat_id, reply_to=message_id)


def reply_card(reply: dict[str, Any] | None) -> dict[str, Any] | None:
    """The card a callback reply replaces the clicked one with (``{"card": {"data": …}}``), if any."""
    card = (reply or {}).get("card")
    data = card.get("data") if isinstance(card, dict) else None
    return data if isinstance(data, dict) else None


def refusal_of(reply: dict[str, Any] | None) -> str | None:
    """The text of a reply that refuses a click (a warning or error toast and no card), else None."""
    shown = (reply or {}).get("toast")
    if reply_card(reply) is not None or not isinstance(shown, dict) or shown.get("type") not in REFUSALS:
        return None
    content = shown.get("content")
    return content if isinstance(content, str) and content.strip() else None


class CardUpdates:
    """The clicked cards' updates through the open API, by message id, and the clicks answered
    before the core was done with them."""

    def __init__(self, update_card: CardUpdate | None) -> None:
        self.update_card = update_card  # None: nothing is replaced through the API
        # kept, so none is collected unfinished; a later update of a card waits for the one before
        self._updating: dict[str, asyncio.Future[None]] = {}
        self._late: set[asyncio.Future[None]] = set()
        # a late reply's card must not cover a later click's: the clicks under way on each card
        # and the newest of them answered (numbered in the order they came), while any is under way
        self._clicks = itertools.count()
        self._under_way: dict[str, int] = {}
        self._newest: dict[str, int] = {}

    def replace(self, message_id: str, card: dict[str, Any]) -> asyncio.Future[None]:
        """Replace the card of ``message_id``, once its update still under way (if any) is over:
        the later click's card lands last."""
        if self.update_card is None:
            raise RuntimeError("no card update through the open API here")
        previous = self._updating.get(message_id)
        update = asyncio.ensure_future(_after(previous, self.update_card(message_id, card)))
        self._updating[message_id] = update
        update.add_done_callback(lambda over: self._forget(message_id, over))
        return update

    def also_original(self, original: MessageRef | None, clicked: str, card: dict[str, Any]) -> None:
        """A click answered on a copy of the question's card (a forwarded message): the callback
        reply replaces the copy, so the card where the question was asked (``original``) gets
        ``card`` through the open API, after the click was answered; a failure is logged."""
        if original is None or not clicked or original.message_id == clicked or self.update_card is None:
            return
        log.info("feishu: a question answered on a copy of its card: the original is updated too")
        self.replace(original.message_id, card).add_done_callback(_original_failed)

    def _forget(self, message_id: str, update: asyncio.Future[None]) -> None:
        if self._updating.get(message_id) is update:  # unless a later one took its place
            del self._updating[message_id]

    async def in_time(
        self, handling: Awaitable[dict[str, Any]], message_id: str, locale: str, tell: Tell | None = None
    ) -> dict[str, Any]:
        """The core's reply to a click if it comes within ``CALLBACK_WAIT_SECONDS``; else the toast
        saying the click is being handled, the reply's card applied once it comes (a refusal, the
        toast that said why being gone, said through ``tell``)."""
        click = next(self._clicks)
        self._under_way[message_id] = self._under_way.get(message_id, 0) + 1
        reply = asyncio.ensure_future(handling)
        try:
            done, _ = await asyncio.wait({reply}, timeout=CALLBACK_WAIT_SECONDS)
        except asyncio.CancelledError:  # the request went away: the click goes on unwatched
            self._answered(message_id, click)
            raise
        if done:
            self._answered(message_id, click)
            return reply.result()
        log.warning("feishu: the core is slow to take a click: answered that it is being handled")
        follow = asyncio.ensure_future(self._when_done(reply, message_id, click, tell))
        self._late.add(follow)
        follow.add_done_callback(self._late.discard)
        return pending_toast(locale)

    def _answered(self, message_id: str, click: int) -> bool:
        """Note that ``click`` on the card was answered: False when a later click on it was first."""
        stands = self._newest.get(message_id, -1) < click
        if stands:
            self._newest[message_id] = click
        self._under_way[message_id] -= 1
        if not self._under_way[message_id]:  # nothing on the card under way: nothing to compare
            del self._under_way[message_id]
            self._newest.pop(message_id, None)
        return stands

    async def _when_done(
        self, reply: asyncio.Future[dict[str, Any]], message_id: str, click: int, tell: Tell | None
    ) -> None:
        """The late reply's card put in place, unless a later click's stands; a refusal said to the
        clicker (``tell``), the card left as it is; a failure logged (nobody else hears of it)."""
        await asyncio.wait({reply})
        overtaken = not self._answered(message_id, click)
        error = None if reply.cancelled() else reply.exception()
        if reply.cancelled() or error is not None:
            if error is not None and unreachable(error):
                log.warning("feishu: a click answered as being handled failed: the store is unreachable")
            else:
                log.error("feishu: a click answered as being handled failed afterwards", exc_info=error)
            return
        if overtaken:
            log.info("feishu: a click answered as being handled ended after a later click: its card stays")
            return
        refusal = refusal_of(reply.result())
        if refusal is not None and tell is not None:
            await _told(tell, refusal)
            return
        card = reply_card(reply.result())
        if card is None or not message_id or self.update_card is None:
            log.info("feishu: a click answered as being handled ended with no card to show")
            return
        try:
            await self.replace(message_id, card)
        except Exception as exc:
            log.warning("feishu: the card of a click answered late was not replaced: %r", exc)

    def under_way(self) -> set[asyncio.Future[None]]:
        """The late replies and card updates not over yet."""
        return {f for f in (*self._late, *self._updating.values()) if not f.done()}

    async def settle(self, timeout: float = SETTLE_SECONDS) -> None:  # noqa: ASYNC109 (a bound, said so)
        """Wait, ``timeout`` at most, until the late replies and card updates under way are over
        (the adapter's stop); what is left then is named in a warning."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while pending := self.under_way():
            left = deadline - loop.time()
            if left <= 0:
                log.warning("feishu: stopped with %d card update(s) still under way", len(pending))
                return
            await asyncio.wait(pending, timeout=left)


async def _told(tell: Tell, refusal: str) -> None:
    """``tell`` the clicker a late refusal; a failure is logged (the click changed nothing)."""
    try:
        await tell(refusal)
    except Exception as exc:
        log.warning("feishu: the refusal of a click answered as being handled was not said: %r", exc)


async def _after(previous: asyncio.Future[None] | None, update: Awaitable[None]) -> None:
    """``update``, once ``previous`` (an update of the same card) is over, however it ended."""
    if previous is not None:
        await asyncio.wait({previous})
    await update


def _original_failed(update: asyncio.Future[None]) -> None:
    """The update of a question's original card (answered on a copy): say if it failed."""
    failure = None if update.cancelled() else update.exception()
    if failure is not None:
        log.warning("feishu: the question's original card was not updated: %r", failure)


def say_if_failed(update: asyncio.Future[None]) -> None:
    """An update that ended after its callback was answered: say if it failed."""
    failure = None if update.cancelled() else update.exception()
    if failure is not None:
        log.warning("feishu: the clicked card's late update failed: %r", failure)
