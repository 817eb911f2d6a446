"""A run shown live in Slack: its own chat stream in a thread, else one message edited.

``stream`` (the conversation has a thread to reply in: a channel mention's, a DM thread):
``chat.startStream`` opens a streamed reply in the thread, ``chat.appendStream`` adds the answer
as the model writes it, escaped like every reply (no ``<!here>`` or ``<@U…>`` from the model gets
through), and the run's steps as task cards (``task_update`` chunks: "Working…", "Searching the
docs…"). The reply ends it: ``chat.stopStream``, then ``chat.update`` makes the message the reply
in mrkdwn, reading exactly as a reply posted whole. Outside DMs Slack streams to a named person
(``recipient_team_id`` / ``recipient_user_id``): the one the run answers (``LiveView.recipient``),
in their own team (someone from another workspace in a Slack Connect channel), else the workspace's.

``edit`` (a top-level DM: no thread to stream into; a stream Slack refused or ended; a person the
stream could not name): the run's message is posted once ("⏳ _Working…_" while nothing is written,
as with streaming off) and edited at most once per ``LIVE_INTERVAL``; the reply is edited into it.

Slack limits both update methods per workspace (``chat.appendStream`` 100 a minute, ``chat.update``
50), a budget the workspace's runs on every replica and process share through the store
(``clarigate.adapters.pacing``). An update that finds no room, or that Slack rate-limits (after its
``Retry-After``) or fails for now (a 5xx), is skipped (``LiveSkipped``): the next slot tries again.

A long answer: the live message shows its first part (edit) or its first ``STREAM_CHARS`` (stream);
the reply puts the first part in that message and posts the rest after it, as a whole reply is split.

The person's Stop on a streamed message (Slack then answers ``stopped_by_user``) stops that message:
no more updates or reply in it, never deleted, it keeps what it showed; ``show`` says so
(``LiveStopped``) and the core stops the run as its requester's ``/cancel`` would.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from slack_sdk.models.messages.chunk import MarkdownTextChunk, TaskUpdateChunk

from clarigate.agent.bounded import BoundedDict
from clarigate.gateway.boundary.messages import Conversation, MessageRef
from clarigate.gateway.boundary.outbound_items import LiveView, TextReply
from clarigate.gateway.boundary.port import AdapterState, DeliveryFailed, LiveSkipped, LiveStopped
from clarigate.gateway.boundary.retry import post_each_once

from ..pacing import Budget, SharedPace
from .feedback import feedback_blocks
from .markup import cut
from .readback import delivery_metadata
from .receive import PLATFORM
from .render import ELLIPSIS_TEXT, render_reply
from .send import SlackSender
from .stream_text import link_start, step_title, stream_piece

log = logging.getLogger(__name__)

STREAM = "stream"
EDIT = "edit"
STOPPED = "stopped"  # the person pressed Stop on the stream: the message takes nothing more
USER_STOPPED = "stopped_by_user"
#: Seconds between two updates: ``chat.update`` is held to about one message a second per
#: channel, and ``chat.appendStream`` (Tier 4, 100+ a minute) is shared by the workspace's runs.
LIVE_INTERVAL = 1.0
#: Model text per append: escaped it grows at most fivefold (``&amp;``), under the 12,000
#: characters Slack takes per ``markdown_text``.
PIECE_CHARS = 2000
#: Model text a stream shows at most; the reply then puts the whole answer in place.
STREAM_CHARS = 8000
#: A piece ends after a space when one is this close to its end: Slack may drop the whitespace
#: a piece starts with. Text without spaces nearby (CJK, a long URL) is cut where it stands.
WORD_ROOM = 40
#: Slack's limit of a ``task_update`` chunk's title, and of the edited message's step line (read alike).
TASK_TITLE_LIMIT = 256
GONE = "message_not_found"
_BROADCAST_WORDS = ("channel", "here", "everyone")
#: Slack's per-workspace limits of the two update methods (Tier 4 and Tier 3, per minute), shared
#: by every replica and worker process through the store (``clarigate.adapters.pacing``).
STREAM_BUDGET = Budget(100, 60.0)
EDIT_BUDGET = Budget(50, 60.0)
#: A live message still counted as open after this long was never finished (a crash): forgotten.
OPEN_FORGOTTEN_SECONDS = 900
#: After Slack refuses to stream in a channel, runs there are edited for this long, not retried.
REFUSED_SECONDS = 3600
MAX_REFUSED = 10_000


# --- what a live message shows (pure) ----------------------------------------------------------


def status_parts(status: str) -> tuple[str, str]:
    """ "⏳ Working…" as its icon and its words (no icon: ``("", status)``)."""
    icon, _, words = status.partition(" ")
    return (icon, words) if words else ("", icon)


def status_mrkdwn(status: str) -> str:
    """A status line as the edited message shows it: "⏳ _Working…_", as "Working…" always looked."""
    icon, words = status_parts(status)
    line = f"_{step_title(words, TASK_TITLE_LIMIT)}_"
    return f"{icon} {line}" if icon else line


def edit_mrkdwn(view: LiveView) -> str:
    """The edited message: the answer so far in mrkdwn (the part the reply's first message will
    hold), then the step under way."""
    parts = [render_reply(view.text)[0]] if view.text.strip() else []
    if view.status:
        parts.append(status_mrkdwn(view.status))
    return "\n\n".join(parts) or ELLIPSIS_TEXT


def piece_end(text: str, start: int) -> int:
    """Where the next piece of ``text`` to stream after ``start`` ends (``start``: nothing yet).

    Pieces are escaped one by one, so none may end inside what could still become a broadcast
    word: a trailing "@he" waits until the text shows whether "@here" follows; nor inside a link
    still written (its unsafe target is taken out of the piece that holds it whole).
    """
    end = min(len(text), start + PIECE_CHARS, STREAM_CHARS)
    if end <= start:
        return start
    space = max(text.rfind(" ", start, end), text.rfind("\n", start, end))
    if space != -1 and end - (space + 1) <= WORD_ROOM:
        end = space + 1
    end = link_start(text, start, end)
    at = text.rfind("@", start, end)
    if at != -1 and any(word.startswith(text[at + 1 : end].lower()) for word in _BROADCAST_WORDS):
        end = at
    return end


def text_chunk(escaped: str) -> dict[str, Any]:
    """A ``markdown_text`` chunk of already escaped text."""
    return MarkdownTextChunk(text=escaped).to_dict()


def task_chunk(task_id: str, title: str, status: str) -> dict[str, Any]:
    """A ``task_update`` chunk: one step of the run as a task card (in_progress, complete, error),
    its title (untrusted) as ``step_title`` shows it, within Slack's limit (``TASK_TITLE_LIMIT``)."""
    return TaskUpdateChunk(id=task_id, title=step_title(title, TASK_TITLE_LIMIT), status=status).to_dict()


def task_changes(
    extra: dict[str, str], status: str | None, failed: frozenset[str] = frozenset()
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The task updates that take the stream from the step ``extra`` records to ``status`` (the
    step before completes, or errs when its line is ``failed``; the new one starts), the record after."""
    current, title = extra.get("task", ""), extra.get("task_title", "")
    wanted = cut(status_parts(status)[1], TASK_TITLE_LIMIT) if status else ""
    if wanted == title:
        return [], extra
    erred = any(cut(status_parts(line)[1], TASK_TITLE_LIMIT) == title for line in failed)
    chunks = [task_chunk(current, title, "error" if erred else "complete")] if current else []
    after = {**extra, "task": "", "task_title": ""}
    if wanted:
        count = int(extra.get("tasks") or 0) + 1
        after.update(task=f"step-{count}", task_title=wanted, tasks=str(count))
        chunks.append(task_chunk(after["task"], wanted, "in_progress"))
    return chunks, after


def digest(content: str) -> str:
    """A short fingerprint of what an edited message shows (an unchanged view costs no call)."""
    return hashlib.blake2b(content.encode(), digest_size=8).hexdigest()


def live_ref(channel: str, ts: str, thread: str | None, extra: dict[str, str]) -> MessageRef:
    """The reference of a live message, with what continuing it takes (kept by the core)."""
    base = {"thread_ts": thread} if thread else {}
    return MessageRef(platform=PLATFORM, chat_id=channel, message_id=ts, extra={**base, **extra})


# --- the live message ---------------------------------------------------------------------------


class LiveMessages:
    """Creates, updates and finishes a run's live message through ``SlackSender``; counts the live
    messages open per workspace, whose updates share Slack's per-workspace method limits."""

    def __init__(self, sender: SlackSender, state: Callable[[], AdapterState]) -> None:
        self.sender = sender
        self.pace = SharedPace(state, PLATFORM)
        # workspace -> live message ts -> when it opened (a run that never finished is forgotten)
        self._open_now: dict[str, OrderedDict[str, float]] = {}
        # channel -> when Slack last refused to stream there (permanently)
        self._refused: BoundedDict[str, float] = BoundedDict(MAX_REFUSED)

    def _refused_here(self, channel: str) -> bool:
        """True when Slack refused a stream in ``channel`` lately (no failed call for every run)."""
        since = self._refused.get(channel)
        if since is not None and time.monotonic() - since > REFUSED_SECONDS:
            del self._refused[channel]
            return False
        return since is not None

    def interval(self, conversation: Conversation, mode: str) -> float:
        """Seconds between two updates of a live message in ``conversation``'s workspace: about one
        a second, slower when several runs here share the workspace's budget (``chat.appendStream``
        100 a minute, ``chat.update`` 50). The budget itself is kept across processes by ``_slot``."""
        budget = STREAM_BUDGET if mode == STREAM else EDIT_BUDGET
        return max(LIVE_INTERVAL, self._count(conversation.workspace) * budget.window)

    async def _slot(self, workspace: str, method: str) -> None:
        """The workspace's slot for one ``method`` call, shared by every replica and process;
        ``LiveSkipped`` when there is no room (see ``SharedPace.take``)."""
        budget = STREAM_BUDGET if method == "chat.appendStream" else EDIT_BUDGET
        await self.pace.take(f"{workspace}:{method}", budget)

    def _count(self, workspace: str) -> int:
        opened = self._open_now.get(workspace)
        if not opened:
            return 0
        stale = time.monotonic() - OPEN_FORGOTTEN_SECONDS
        while opened and next(iter(opened.values())) < stale:
            opened.popitem(last=False)
        return len(opened)

    def _opened(self, workspace: str, ts: str) -> None:
        self._open_now.setdefault(workspace, OrderedDict())[ts] = time.monotonic()

    def closed(self, workspace: str, ts: str) -> None:  # it ended, or its stream waits for a question
        opened = self._open_now.get(workspace)
        if opened is not None:
            opened.pop(ts, None)
            if not opened:
                del self._open_now[workspace]

    async def show(self, conversation: Conversation, view: LiveView, ref: MessageRef | None) -> MessageRef:
        """Create (``ref`` None) or update the live message; its reference after the update."""
        if ref is None:
            return await self._open(conversation, view)
        if ref.extra.get("live") == STOPPED:
            return ref
        try:
            if ref.extra.get("live") == STREAM:
                return await self._stream_more(conversation.workspace, view, ref)
            return await self._edit(conversation.workspace, view, ref)
        except DeliveryFailed as error:  # a rate limit (after its Retry-After), a 5xx: a later slot
            if error.permanent:  # (the message gone, …): no more updates, the reply comes whole
                raise
            log.info("slack: a live update is tried again later (%s)", error.code)
            raise LiveSkipped(error.retry_after or self.interval(conversation, ref.extra["live"])) from error

    async def _open(self, conversation: Conversation, view: LiveView) -> MessageRef:
        thread = conversation.reply_to
        if view.mode == STREAM and thread and not self._refused_here(conversation.chat_id):
            person = view.recipient
            recipient = (person.team or conversation.workspace, person.user_id) if person else None
            if recipient is not None or conversation.is_direct:  # Slack names no one in a DM
                try:
                    ref = await self._start(conversation.chat_id, thread, view, recipient)
                    self._opened(conversation.workspace, ref.message_id)
                    return ref
                except DeliveryFailed as error:
                    if error.permanent:  # the next runs here go straight to edits for a while
                        self._refused[conversation.chat_id] = time.monotonic()
                    log.info("slack: no stream here (%s): the run's message is edited instead", error.code)
        content = edit_mrkdwn(view)
        ts = await self.sender.post(conversation.chat_id, content, thread_ts=thread)
        self._opened(conversation.workspace, ts)
        return live_ref(conversation.chat_id, ts, thread, {"live": EDIT, "digest": digest(content)})

    async def _start(
        self, channel: str, thread: str, view: LiveView, recipient: tuple[str, str] | None
    ) -> MessageRef:
        chunks, extra = task_changes({}, view.status)
        end = piece_end(view.text, 0)
        if end and (piece := stream_piece(view.text[:end])):  # (an unsafe link alone: nothing)
            chunks.append(text_chunk(piece))
        ts = await self.sender.start_stream(channel, thread, chunks, recipient)
        return live_ref(channel, ts, thread, {**extra, "live": STREAM, "streamed": str(end)})

    async def _stream_more(self, workspace: str, view: LiveView, ref: MessageRef) -> MessageRef:
        if view.shown is None:  # another replica's stream: what it shows is not known here
            if await self._stop_quietly(ref):
                raise LiveStopped(self._stopped_by_user(ref))
            return await self._rewrite(view, ref)
        start = int(ref.extra.get("streamed") or 0)
        chunks, extra = task_changes(ref.extra, view.status, view.failed)
        end = piece_end(view.text, start)
        if end > start and (piece := stream_piece(view.text[start:end], view.text[:start])):
            chunks.append(text_chunk(piece))
        if not chunks:
            return ref  # nothing new
        await self._slot(workspace, "chat.appendStream")  # no room: skipped, the next update sends it
        try:
            await self.sender.append_stream(ref.chat_id, ref.message_id, chunks)
        except DeliveryFailed as error:
            if error.code == USER_STOPPED:  # (Slack names no one: only people here see its Stop)
                raise LiveStopped(self._stopped_by_user(ref)) from error
            if not error.permanent or error.code == GONE:
                raise
            log.info("slack: the stream took no more (%s): its message is edited instead", error.code)
            await self._stop_quietly(ref)
            return await self._rewrite(view, ref)
        return ref.model_copy(update={"extra": {**extra, "streamed": str(end)}})

    @staticmethod
    def _stopped_by_user(ref: MessageRef) -> MessageRef:
        log.info("slack: the person stopped the stream: its message takes no more updates")
        return ref.model_copy(update={"extra": {**ref.extra, "live": STOPPED}})

    async def _rewrite(self, view: LiveView, ref: MessageRef) -> MessageRef:
        """Turn a stream into an edited message (``chat.update`` works on a stopped stream)."""
        content = edit_mrkdwn(view)
        await self.sender.update(ref.chat_id, ref.message_id, content, None)
        thread = ref.extra.get("thread_ts")
        return live_ref(ref.chat_id, ref.message_id, thread, {"live": EDIT, "digest": digest(content)})

    async def _edit(self, workspace: str, view: LiveView, ref: MessageRef) -> MessageRef:
        content = edit_mrkdwn(view)
        if ref.extra.get("digest") == digest(content):
            return ref
        await self._slot(workspace, "chat.update")
        await self.sender.update(ref.chat_id, ref.message_id, content, None)
        return ref.model_copy(update={"extra": {**ref.extra, "digest": digest(content)}})

    # --- the end of a run ---------------------------------------------------------------------

    async def finish(
        self, conversation: Conversation, reply: TextReply, state: AdapterState | None = None
    ) -> MessageRef:
        """The reply becomes the live message (its first part; the rest posted after it). Safe to
        repeat: a stopped stream is stopped again harmlessly, ``chat.update`` sets the same text,
        and a part an earlier attempt posted (remembered in ``state``) is not posted again.
        A permanent refusal removes the half-written message before it is raised."""
        ref = reply.live
        assert ref is not None
        self.closed(conversation.workspace, ref.message_id)
        parts = render_reply(reply.text)
        stopped = ref.extra.get("live") == STOPPED
        if ref.extra.get("live") == STREAM:
            stopped = await self._stop(ref)
        if stopped:  # the person's Stop: the message keeps what it showed, the reply is not added
            return live_ref(conversation.chat_id, ref.message_id, conversation.reply_to, {})
        ask = reply.feedback  # 👍/👎 under the last part (``feedback_blocks``)
        first = feedback_blocks(parts[0], ask) if ask is not None and len(parts) == 1 else None
        if ref.extra.get("live") != EDIT or ref.extra.get("digest") != digest(parts[0]) or first:
            try:  # (an edited message that shows the reply already needs no edit)
                metadata = delivery_metadata(reply.delivery_id, 0, len(parts))
                await self.sender.update(ref.chat_id, ref.message_id, parts[0], first, metadata)
            except DeliveryFailed as error:
                if error.permanent:
                    await self._delete_quietly(ref)
                raise

        async def post(numbered: tuple[int, str]) -> str:
            index, part = numbered
            blocks = feedback_blocks(part, ask) if ask is not None and index == len(parts) - 1 else None
            metadata = delivery_metadata(reply.delivery_id, index, len(parts))
            return await self.sender.post(conversation.chat_id, part, blocks, conversation.reply_to, metadata)

        posted = await post_each_once(state, reply.delivery_id, list(enumerate(parts))[1:], post, ":live")
        ts = posted[-1] if posted else ref.message_id
        return live_ref(conversation.chat_id, ts, conversation.reply_to, {})

    async def end(self, conversation: Conversation, ref: MessageRef) -> None:
        """Close a live message no reply finishes: its stream stopped, the message deleted."""
        self.closed(conversation.workspace, ref.message_id)
        if ref.extra.get("live") == STOPPED:
            return  # what the person stopped stays as it is
        if ref.extra.get("live") == STREAM:
            await self._stop_quietly(ref)
        try:
            await self.sender.delete(ref.chat_id, ref.message_id)
        except DeliveryFailed as error:
            if error.code != GONE:  # gone already: a repeated close
                raise

    async def _stop(self, ref: MessageRef) -> bool:
        """``chat.stopStream``, the step under way marked done (refused: tried once more, plain); stopped
        or not, ``chat.update`` follows, unless the person stopped it (``stopped_by_user``): True."""
        task, title = ref.extra.get("task"), ref.extra.get("task_title", "")
        for chunks in ([task_chunk(task, title, "complete")] if task else None, None):  # a retry: plain
            try:
                await self.sender.stop_stream(ref.chat_id, ref.message_id, chunks)
                return False
            except DeliveryFailed as error:
                if error.code == USER_STOPPED:
                    self._stopped_by_user(ref)
                    return True
                if not error.permanent:
                    raise
                log.info("slack: the stream was not stopped (%s): its message is rewritten", error.code)
                if error.code in (GONE, "message_not_in_streaming_state"):  # ended already
                    break
        return False

    async def _stop_quietly(self, ref: MessageRef) -> bool:
        try:
            return await self._stop(ref)
        except DeliveryFailed as error:
            log.info("slack: could not stop a stream: %s", error.code)
            return False

    async def _delete_quietly(self, ref: MessageRef) -> None:
        try:
            await self.sender.delete(ref.chat_id, ref.message_id)
        except DeliveryFailed as error:  # already gone: nothing left to tidy
            log.info("slack: could not delete the live message: %s", error.code)
