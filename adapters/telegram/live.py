"""A run shown live on Telegram: a streamed draft in private chats, one edited message elsewhere.

- ``draft`` (private chats): ``sendMessageDraft`` shows the answer as it is written, animated,
  without a message. The Bot API documents the draft as an ephemeral preview (30 seconds)
  to be persisted with ``sendMessage``: the reply is that one message (split past 4096
  characters), and Telegram's apps drop the draft when it arrives. There is no call to remove
  a draft, so one a run leaves (it asked a question, it failed) is simply not sent again; the
  message that follows replaces it, or it expires. A draft that stays unchanged (a long tool
  step) is sent again every ``DRAFT_REFRESH`` seconds, so it does not expire while the run works.
- ``edit`` (groups, and private chats where drafts are refused): ``sendMessage`` once, then
  ``editMessageText`` at most every ``live_interval``; the reply edits that message into its
  first part and posts the rest after it; a run that ends without a reply deletes it. The
  live updates of every run in one group share Telegram's 20 messages a minute there: one slot
  per ``GROUP_EDIT_INTERVAL`` window, taken in the shared state (so across replicas and worker
  processes too); an update that finds no slot within one window is skipped (``LiveSkipped``: the
  run's first words are tried again at the next slot; a later update's text goes with the next).

Before a run has anything to show but "⏳ Working…", Telegram's own "typing…" indicator stands
for it, as without streaming: a quick run posts its reply and nothing else. Model text is
converted and escaped (``markdown_to_html``) in every update; an update longer than a message
is cut, never refused. Live updates make one attempt: a flood wait is raised at once, and the
core stops updating that run's message.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import uuid
from typing import Any

from telegram import InlineKeyboardMarkup
from telegram.error import BadRequest, InvalidToken, RetryAfter, TelegramError

from clarigate.agent.protocol.graphemes import shorten
from clarigate.gateway.boundary.messages import Conversation, MessageRef
from clarigate.gateway.boundary.outbound_items import LiveView
from clarigate.gateway.boundary.port import AdapterState, DeliveryFailed
from clarigate.gateway.boundary.retry import post_each_once
from clarigate.gateway.flow.notices import notice

from ..pacing import Budget, SharedPace
from .chat_action import TypingIndicators
from .markup import MAX_MESSAGE_CHARS, markdown_to_html, split_markdown
from .receive import remember_chain
from .render import TelegramMessage, escape
from .send import PLATFORM, TelegramSender, message_ref, retry_seconds

log = logging.getLogger(__name__)

DRAFT = "draft"
EDIT = "edit"
#: Seconds between updates. Telegram asks for at most about one message per second in a chat and
#: 20 a minute in a group (https://core.telegram.org/bots/faq#my-bot-is-hitting-limits-how-do-i-avoid-this);
#: a draft is held to the per-chat pace as well.
DRAFT_INTERVAL = 1.0
PRIVATE_EDIT_INTERVAL = 1.0
GROUP_EDIT_INTERVAL = 3.0
DRAFT_REFRESH = 20.0  # Telegram's apps show a draft for 30 seconds after its last update
DRAFT_KEEP = 300.0  # seconds an unchanged draft is kept up at most (a run whose end is lost)
LIVE_TTL = 6 * 3600  # how long the message of a live ref made before it is known (hand-overs)
CUT = "\n…"
#: A status line's characters at most (a tool's name, an agent's progress line: untrusted), so
#: that it leaves the answer most of a message.
STATUS_CHARS = 256
MAX_KEPT = 10_000  # live tokens whose shown HTML is kept at most (runs whose end is lost)


def live_html(view: LiveView, limit: int = MAX_MESSAGE_CHARS, own: str = "") -> str:
    """What a live message or draft shows: the answer so far as Telegram HTML, rendered as the
    reply is (``markdown_to_html``: escaped, mentions and other bots' commands made inert, ``own``
    this bot's username, whose commands stay tappable), cut at a paragraph or line to fit
    ``limit``, then the status line in italics (cut to ``STATUS_CHARS``)."""
    status = f"<i>{escape(shorten(view.status, STATUS_CHARS))}</i>" if view.status else ""
    text = view.text.strip()
    if not text:
        return status
    room = limit - (len(status) + 2 if status else 0)
    body = markdown_to_html(text, own)
    if len(body) > room:
        body = markdown_to_html(split_markdown(text, room - len(CUT))[0], own) + CUT
    return f"{body}\n\n{status}" if status else body


def working_only(view: LiveView) -> bool:
    """True when the view has nothing to show but "⏳ Working…"."""
    return not view.text.strip() and view.status == notice("working_status", view.locale)


class LiveMessages:
    """The live messages of the runs in progress on this replica (see the module docstring).

    A ref carries the live token (a draft's ``draft_id``), the mode, the message id once there is
    a message, and the replica that made it. A message made after the ref was first handed out
    (the run first showed only "typing…") is also kept in the shared state under its token, so a
    replica that continues or finishes the run from that first ref finds it.
    """

    def __init__(self, sender: TelegramSender, state: AdapterState, typing: TypingIndicators) -> None:
        self.sender = sender
        self.state = state
        self.typing = typing
        self.replica = uuid.uuid4().hex[:12]
        self.pace = SharedPace(lambda: state, PLATFORM)
        self.drafts_available = True  # False once the Bot API server answered it has no drafts
        self._no_drafts: set[str] = set()  # private chats that refused a draft
        self._refresh: dict[str, asyncio.Task[None]] = {}
        self._shown: dict[str, str] = {}  # live token -> the HTML its draft or message shows now
        self._flood_until: dict[str, float] = {}  # chat -> when the flood wait a live update met ends

    def mode(self, conversation: Conversation) -> str:
        """Drafts in private chats (unless refused there), an edited message elsewhere."""
        if conversation.is_direct and self.drafts_available and conversation.chat_id not in self._no_drafts:
            return DRAFT
        return EDIT

    @staticmethod
    def interval(conversation: Conversation, mode: str) -> float:
        """Seconds between two updates, inside Telegram's per-chat and per-group limits."""
        if mode == DRAFT:
            return DRAFT_INTERVAL
        return PRIVATE_EDIT_INTERVAL if conversation.is_direct else GROUP_EDIT_INTERVAL

    async def show(self, conversation: Conversation, view: LiveView, ref: MessageRef | None) -> MessageRef:
        """Create or update the live draft or message; Bot API errors propagate (a flood wait is
        noted first: the reply waits it out, and a private chat shows "typing…" meanwhile)."""
        token = ref.extra.get("live", "") if ref is not None else ""
        token = token or str(secrets.randbelow(2**31 - 1) + 1)  # a draft_id: non-zero
        mode = ref.extra.get("mode", EDIT) if ref is not None else self.mode(conversation)
        chat_id, message_id = await self._message_of(ref) if ref is not None else (conversation.chat_id, "")
        drafted = ref is not None and ref.extra.get("drafted") == "1"
        if message_id:
            mode = EDIT
        if not message_id and not drafted and working_only(view):
            # nothing to show yet: "typing…", as a run without streaming shows
            await self.typing.start(conversation)
            return self._ref(conversation, mode, token)
        html = live_html(view, own=self.sender.own)
        if not html:  # only blank text so far: nothing Telegram would take
            return ref or self._ref(conversation, mode, token)
        if ref is not None and (drafted or message_id) and self._shown.get(token) == html:
            return ref  # it shows this already (a long answer's cut part); a draft's refresh keeps it up
        if mode == EDIT:
            await self._group_slot(conversation)  # no room: ``LiveSkipped`` ("typing…" goes on)
        self.typing.stop(conversation)
        try:
            made = await self._update(conversation, ref, mode, token, (chat_id, message_id), html)
        except RetryAfter as exc:
            await self._flooded(conversation, exc)
            raise
        if len(self._shown) > MAX_KEPT:
            self._shown.clear()
        self._shown[token] = html
        return made

    async def _update(
        self,
        conversation: Conversation,
        ref: MessageRef | None,
        mode: str,
        token: str,
        where: tuple[str, str],
        html: str,
    ) -> MessageRef:
        """Send ``html`` as the draft, the edit of the message ``where`` is (its chat and id), or
        the message first posted."""
        if mode == DRAFT:
            try:
                await self.sender.draft(conversation, int(token), html)
            except (BadRequest, InvalidToken) as exc:
                if not self._drafts_refused(conversation, exc):
                    raise
                log.info("telegram drafts refused in chat %s (%s): editing", conversation.chat_id, exc)
            else:
                self._keep_draft(conversation, token, html)
                return self._ref(conversation, DRAFT, token, drafted=True)
        chat_id, message_id = where
        if message_id:
            await self.sender.edit(chat_id, message_id, TelegramMessage(html))
            return self._ref(conversation, EDIT, token, message_id, chat_id=chat_id)
        sent = await self.sender.post(conversation, TelegramMessage(html))
        chat_id, message_id = str(sent.chat_id), str(sent.message_id)  # the supergroup's, once upgraded
        try:  # the message exists now: whatever fails here, its ref must reach the core
            await remember_chain(self.state, conversation, message_id, chat_id)
            if ref is not None:  # the ref first handed out names no message: keep it for a hand-over
                if chat_id != ref.chat_id:
                    await self.state.set_json(_chat_key(token), chat_id, LIVE_TTL)
                await self.state.set_json(_message_key(token), message_id, LIVE_TTL)
        except Exception:
            log.warning("could not record the live message %s", message_id, exc_info=True)
        return self._ref(conversation, EDIT, token, message_id, chat_id=chat_id)

    async def _flooded(self, conversation: Conversation, exc: RetryAfter) -> None:
        """Note a flood wait met by a live update: nothing more goes to the chat before it ends
        (the reply waits for it), and a private chat shows "typing…" rather than nothing."""
        now = asyncio.get_running_loop().time()
        self._flood_until = {chat: until for chat, until in self._flood_until.items() if until > now}
        self._flood_until[conversation.chat_id] = now + retry_seconds(exc)
        if conversation.is_direct:
            await self.typing.start(conversation)

    def _flood_left(self, chat_id: str) -> float:
        """Seconds left of the flood wait a live update met in ``chat_id`` (0: none)."""
        until = self._flood_until.get(chat_id)
        return max(until - asyncio.get_running_loop().time(), 0.0) if until is not None else 0.0

    async def finish(
        self,
        conversation: Conversation,
        text: str,
        ref: MessageRef,
        delivery_id: str | None = None,
        keyboard: InlineKeyboardMarkup | None = None,
    ) -> list[MessageRef]:
        """Make the live message the reply (its first part; the rest posted after it), or, for a
        draft or a run that only showed "typing…", post the reply; ``keyboard`` (👍/👎) under its
        last part. Safe to repeat: a part posted by an earlier attempt of ``delivery_id`` is not
        posted again.

        A live message that can no longer be edited (deleted, too old) is deleted best-effort and
        the ``BadRequest`` raised: the core then posts the reply anew.
        """
        wait = self._flood_left(conversation.chat_id)
        if wait > 0:  # no call inside the flood wait a live update met: the core waits it out
            raise DeliveryFailed("telegram reply: flood wait", permanent=False, retry_after=wait, code="429")
        shown = self._shown.pop(ref.extra.get("live", ""), None)  # kept past ``live_over`` for this
        self.quiet(conversation, ref)
        pieces = [piece for piece in split_markdown(text) if piece.strip()]
        chat_id, message_id = await self._message_of(ref)

        async def post(numbered: tuple[int, str]) -> dict[str, Any]:
            index, piece = numbered
            under = keyboard if index == len(pieces) - 1 else None
            return message_ref(await self.sender.post_piece(conversation, piece, under)).model_dump(
                mode="json"
            )

        def refs(posted: list[dict[str, Any]]) -> list[MessageRef]:
            return [MessageRef.model_validate(one) for one in posted]

        numbered = list(enumerate(pieces))
        if not message_id:
            return refs(await post_each_once(self.state, delivery_id, numbered, post, ":live"))
        if not pieces:
            await self.end(conversation, ref)
            return []
        under = keyboard if len(pieces) == 1 else None
        first = await self._edit_first(
            ref.model_copy(update={"chat_id": chat_id}), message_id, pieces[0], shown, under
        )
        return [first] + refs(await post_each_once(self.state, delivery_id, numbered[1:], post, ":live"))

    async def _edit_first(
        self, ref: MessageRef, message_id: str, piece: str, shown: str | None, keyboard: Any
    ) -> MessageRef:
        """The live message made the reply's first piece (``keyboard`` under it, or none); a
        message that shows it already is not edited (Telegram: "not modified"). One that can no
        longer be edited is deleted best-effort and the ``BadRequest`` raised."""
        try:
            same = shown == markdown_to_html(piece, self.sender.own)
            edited = (
                None if same else await self.sender.edit_markdown(ref.chat_id, message_id, piece, keyboard)
            )
            if same and keyboard is not None:
                await self.sender.set_keyboard(ref.chat_id, message_id, keyboard)
        except BadRequest:
            with contextlib.suppress(TelegramError):
                await self.sender.delete(ref.chat_id, message_id)
            raise
        return message_ref(edited) if edited is not None else ref.model_copy(update={"extra": {}})

    async def end(self, conversation: Conversation, ref: MessageRef) -> None:
        """Close a live message no reply finishes: the message is deleted, a draft left to the
        message that follows (or to expire), "typing…" stopped. Safe to repeat."""
        self._shown.pop(ref.extra.get("live", ""), None)
        self.quiet(conversation, ref)
        chat_id, message_id = await self._message_of(ref)
        if message_id:
            await self.sender.delete(chat_id, message_id)

    async def stop(self) -> None:
        """Stop keeping drafts up (shutdown)."""
        for task in self._refresh.values():
            task.cancel()
        await asyncio.gather(*self._refresh.values(), return_exceptions=True)
        self._refresh.clear()

    # --- internals --------------------------------------------------------------------------------

    async def _group_slot(self, conversation: Conversation) -> None:
        """A group's slot for one live update, shared by its runs on every replica and process
        (Telegram's 20 messages a minute there): see ``clarigate.adapters.pacing``; ``LiveSkipped``
        when there is none."""
        if not conversation.is_direct:
            await self.pace.take(conversation.chat_id, Budget(1, GROUP_EDIT_INTERVAL))

    def _ref(
        self,
        conversation: Conversation,
        mode: str,
        token: str,
        message_id: str = "",
        drafted: bool = False,
        chat_id: str = "",
    ) -> MessageRef:
        """A live ref; one naming a message names the chat it is in (``chat_id``: the supergroup of
        a group upgraded before it was posted), else the conversation's."""
        extra = {"live": token, "mode": mode, "by": self.replica}
        if drafted:
            extra["drafted"] = "1"
        chat = chat_id or conversation.chat_id
        return MessageRef(platform=PLATFORM, chat_id=chat, message_id=message_id, extra=extra)

    async def _message_of(self, ref: MessageRef) -> tuple[str, str]:
        """The live message's chat and id: in the ref, else (a ref another replica made) in the
        shared state, its chat there only when it is not the ref's."""
        if ref.message_id or ref.extra.get("by") == self.replica or not ref.extra.get("live"):
            return ref.chat_id, ref.message_id
        found = await self.state.get_json(_message_key(ref.extra["live"]))
        if not found:
            return ref.chat_id, ""
        chat = await self.state.get_json(_chat_key(ref.extra["live"]))
        return str(chat or ref.chat_id), str(found)

    def _drafts_refused(self, conversation: Conversation, exc: TelegramError) -> bool:
        """Whether ``exc`` says drafts cannot be had here (then this chat, or every chat, edits)."""
        text = exc.message.lower()
        if isinstance(exc, InvalidToken):  # 404 "method not found": a Bot API server without drafts
            if "not found" not in text:
                return False
            self.drafts_available = False
            return True
        if "draft" not in text and "peer_invalid" not in text:
            return False
        if len(self._no_drafts) > 10_000:
            self._no_drafts.clear()
        self._no_drafts.add(conversation.chat_id)
        return True

    def _keep_draft(self, conversation: Conversation, token: str, html: str) -> None:
        running = self._refresh.pop(token, None)
        if running is not None:
            running.cancel()
        self._refresh[token] = asyncio.create_task(self._send_again(conversation, token, html))

    async def _send_again(self, conversation: Conversation, token: str, html: str) -> None:
        """Send an unchanged draft again before Telegram's apps let it expire."""
        try:
            for _ in range(int(DRAFT_KEEP // DRAFT_REFRESH)):
                await asyncio.sleep(DRAFT_REFRESH)
                await self.sender.draft(conversation, int(token), html)
        except TelegramError as exc:
            log.debug("telegram draft refresh failed: %s", exc)
        finally:
            if self._refresh.get(token) is asyncio.current_task():
                del self._refresh[token]

    def quiet(self, conversation: Conversation, ref: MessageRef) -> None:
        """Nothing more is shown for this run: no "typing…", no draft sent again."""
        self.typing.stop(conversation)
        running = self._refresh.pop(ref.extra.get("live", ""), None)
        if running is not None:
            running.cancel()


def _message_key(token: str) -> str:
    return f"live-message:{token}"


def _chat_key(token: str) -> str:
    return f"live-message-chat:{token}"
