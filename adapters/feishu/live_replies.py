"""The Feishu adapter's live replies (``gateway/flow/live.py``): a CardKit streaming card, else an
edited card while CardKit is refused; finished as the reply, or recalled (mixed into ``FeishuAdapter``)."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from clarigate.adapters.feishu.settings import FeishuSettings
from clarigate.gateway.boundary.messages import Conversation, FeedbackAsk, MessageRef
from clarigate.gateway.boundary.outbound_items import LiveView, TextReply

from ..pacing import SharedPace
from .feedback import append_votes, with_feedback
from .live import (
    ANSWER_ELEMENT,
    CARD_API,
    EDIT_API,
    LiveMessages,
    budget,
    edited_card,
    interval,
    live_markdown,
    streaming_card,
    streams,
)
from .open_api import FeishuApiError
from .render import Card, card_json, render_notice, render_reply
from .send import STREAMING_CLOSED_CODES, FeishuSender, entity_content

# The logger these lines have always been written under (the adapter's).
log = logging.getLogger("clarigate.adapters.feishu.adapter")

#: After CardKit refused to make a card (no ``cardkit:card:write`` scope, …), live replies are
#: edited cards for this many seconds before CardKit is tried again.
CARDKIT_PAUSE_SECONDS = 600.0
#: What a live message that cannot be recalled is left showing (nothing half-written, no cursor).
CLOSED_LINE = "—"


class FeishuLiveReplies:
    """The adapter's live messages: ``live_mode``, ``show_live``, ``finish_live``, ``end_live``."""

    settings: FeishuSettings
    sender: FeishuSender
    live: LiveMessages
    pace: SharedPace
    cardkit_paused_until: float

    if TYPE_CHECKING:  # the adapter's own (``FeishuAdapter``)

        async def deliver(
            self,
            conversation: Conversation,
            content: str,
            key: str | None = None,
            extra: dict[str, str] | None = None,
        ) -> MessageRef: ...

        async def post_reply(
            self,
            conversation: Conversation,
            text: str,
            key: str | None,
            first: int = 0,
            feedback: FeedbackAsk | None = None,
        ) -> MessageRef | None: ...

    # --- live replies (gateway/flow/live.py): a streaming card, else an edited card -----------

    def live_mode(self, conversation: Conversation) -> str | None:
        """ "card" (CardKit streaming card), or "edit" (a card patched) while CardKit is refused."""
        return "edit" if time.monotonic() < self.cardkit_paused_until else "card"

    def live_interval(self, conversation: Conversation, mode: str) -> float:
        """A second between updates of a live card, longer when many run at once."""
        return interval(mode, self.live.active())

    async def show_live(
        self, conversation: Conversation, view: LiveView, ref: MessageRef | None
    ) -> MessageRef | None:
        """Make the run's live message (a streaming card; an edited card if CardKit will not) or
        update it with the whole text so far, escaped, and the status line."""
        content = live_markdown(view)
        if ref is None:
            ref = await self._start_live(conversation, view, content)
        elif self.live.same(ref.message_id, content):
            return ref
        else:
            await self._slot(ref)  # no room in the app's budget: ``LiveSkipped``, nothing sent
            if streams(ref):
                await self._stream(ref, content)
            else:
                await self.sender.update_card(ref.message_id, edited_card(view, content))
        self.live.shown(ref.message_id, content)
        return ref

    async def _slot(self, ref: MessageRef) -> None:
        """The app's slot for one live update on its API, shared by every replica and process;
        ``LiveSkipped`` when there is no room (see ``SharedPace.take``)."""
        api = CARD_API if streams(ref) else EDIT_API
        await self.pace.take(f"{self.settings.app_id}:{api}", budget())

    async def _start_live(self, conversation: Conversation, view: LiveView, content: str) -> MessageRef:
        if view.mode == "card" and time.monotonic() >= self.cardkit_paused_until:
            try:
                card_id = await self.sender.create_card_entity(streaming_card(view, content))
            except FeishuApiError as exc:
                if exc.permanent:
                    self.cardkit_paused_until = time.monotonic() + CARDKIT_PAUSE_SECONDS
                log.warning(
                    "feishu: CardKit made no streaming card (%s): live replies are edited cards%s",
                    exc.code or exc,
                    f" for {CARDKIT_PAUSE_SECONDS:.0f} s" if exc.permanent else " for this run",
                )
            else:
                extra = {"mode": "card", "card_id": card_id, "created_ms": str(int(time.time() * 1000))}
                try:
                    return await self.deliver(conversation, entity_content(card_id), extra=extra)
                except FeishuApiError as exc:  # it may be shown all the same: not left streaming
                    log.warning("feishu: the streaming card was not sent (%s): edited cards now", exc.code)
                    await self.sender.close_entity(extra, render_notice(CLOSED_LINE))
        return await self.deliver(
            conversation,
            card_json(edited_card(view, content)),
            extra={"mode": "edit"},
        )

    async def _stream(self, ref: MessageRef, content: str) -> None:
        """The streaming card's text, whole; its streaming mode opened again if Feishu closed it
        (it does after a while)."""
        card_id, created = ref.extra["card_id"], int(ref.extra["created_ms"])
        try:
            await self.sender.stream_text(card_id, created, ANSWER_ELEMENT, content)
        except FeishuApiError as exc:
            if exc.feishu_code not in STREAMING_CLOSED_CODES:
                raise
            await self.sender.card_settings(card_id, created, {"streaming_mode": True})
            await self.sender.stream_text(card_id, created, ANSWER_ELEMENT, content)

    async def finish_live(
        self, conversation: Conversation, item: TextReply, key: str | None
    ) -> MessageRef | None:
        """The run's reply in its live message: streaming closed and the final card in its place
        (the first part of a long reply; the rest posted after it, each with its own ``uuid``),
        👍/👎 appended to the last card once its stream is over (``feedback``). Safe to repeat.
        Refused for good, the live message is recalled before the failure is raised, so the reply
        the core then posts anew is the only copy."""
        ref, cards, ask = item.live, render_reply(item.text), item.feedback
        assert ref is not None  # noqa: S101 (the caller's condition)
        if not cards:
            await self.end_live(ref)
            return None
        try:
            last = ask if len(cards) == 1 else None  # 👍/👎 under a one-card reply: on this card
            await self._settle(ref, cards[0] if streams(ref) else with_feedback(cards[0], last))
            if last is not None and streams(ref):  # its stream is over now: appended
                await append_votes(self.sender, ref, last, key)
            await self.post_reply(conversation, item.text, key, first=1, feedback=ask)
        except FeishuApiError as exc:
            if exc.permanent:
                log.warning("feishu: the live message cannot become the reply (%s): recalling it", exc.code)
                await self._discard(ref)
            raise
        self.live.done(ref.message_id)
        return ref

    async def end_live(self, ref: MessageRef) -> None:
        """Close a live message no reply finishes: recall it; if Feishu will not, end its stream and
        leave a plain line (nothing half-written)."""
        self.live.done(ref.message_id)
        try:
            await self.sender.delete_message(ref.message_id)
        except FeishuApiError as exc:
            if not exc.permanent:
                raise
            log.warning("feishu: could not recall the live message (%s): closing it instead", exc.code)
            await self._settle(ref, render_notice(CLOSED_LINE))

    async def _settle(self, ref: MessageRef, card: Card) -> None:
        """Make the live message show ``card`` for good: streaming mode off, then the whole card."""
        if streams(ref):
            card_id, created = ref.extra["card_id"], int(ref.extra["created_ms"])
            await self.sender.card_settings(card_id, created, {"streaming_mode": False})
            await self.sender.update_card_entity(card_id, created, card)
        else:
            await self.sender.update_card(ref.message_id, card)

    async def _discard(self, ref: MessageRef) -> None:
        """Best effort: recall a live message, else at least end its stream."""
        self.live.done(ref.message_id)
        try:
            await self.sender.delete_message(ref.message_id)
            return
        except Exception as exc:
            log.warning("feishu: could not recall the live message: %s", getattr(exc, "code", None) or exc)
        if streams(ref):
            try:
                await self._settle(ref, render_notice(CLOSED_LINE))
            except Exception as exc:
                log.warning("feishu: could not close the live message: %s", getattr(exc, "code", None) or exc)
