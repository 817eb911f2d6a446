"""The Slack adapter's ``send``: each outbound item as the Web API calls that show it.

Replies, questions, notices and private notices are posted in the conversation's thread; a
closed question's message is updated; live replies go through ``LiveMessages``. The
"Working…" message of a run is kept (by chat thread, in process memory: the reply that
replaces it is sent next by the same worker) so the reply is edited into it instead of a
delete and a new post.
"""

from __future__ import annotations

import logging
from typing import Any

from clarigate.agent.protocol import catalog, ui_text
from clarigate.gateway.boundary.messages import Conversation, MessageRef
from clarigate.gateway.boundary.outbound_items import (
    ClarificationClosed,
    ClarificationOut,
    ErrorReply,
    LiveEnd,
    Outbound,
    ProgressUpdate,
    TextReply,
)
from clarigate.gateway.boundary.port import AdapterState, DeliveryFailed, GatewayPort
from clarigate.gateway.boundary.retry import post_each_once

from .agent_view import AgentView, is_status
from .feedback import feedback_blocks
from .live import LiveMessages
from .markup import escape_mrkdwn
from .readback import delivery_metadata
from .receive import PLATFORM
from .render import (
    answered_mrkdwn,
    notification_text,
    private_notice_mrkdwn,
    render_clarification,
    render_closed,
    render_reply,
)
from .respond import kept_url
from .send import SlackSender
from .stream_question import StreamQuestions

# The logger these lines have always been written under (operators' filters name it).
log = logging.getLogger("clarigate.adapters.slack.adapter")

#: Finished "Working…" messages kept at most: a reply that never came must not keep one forever.
MAX_WORKING = 1000


class SlackOutbound:
    """Delivers outbound items through ``SlackSender`` and ``LiveMessages``."""

    def __init__(
        self, gateway: GatewayPort, sender: SlackSender, live: LiveMessages, agent: AgentView
    ) -> None:
        self.gateway = gateway
        self.sender = sender
        self.live = live
        self.agent = agent
        self.questions = StreamQuestions(sender, live)
        # finished "Working…" messages by chat thread, each waiting for the reply that replaces it
        # (sent next by the same worker, so process memory is enough)
        self._working: dict[str, MessageRef] = {}

    def state(self) -> AdapterState | None:
        """The core's adapter state (None for an adapter made without a core: ``doctor``, tests)."""
        return getattr(self.gateway, "state", None)

    async def _ephemeral(self, channel: str, user: str, text: str, thread: str | None) -> None:
        """A note for ``user`` only; one who is not in the channel (``user_not_in_channel``, e.g.
        a guest who left) cannot be shown it anywhere there: said in one line, not retried."""
        try:
            await self.sender.ephemeral(channel, user, text, thread)
        except DeliveryFailed as error:
            if error.code != "user_not_in_channel":
                raise
            log.info("slack: a private note was not shown: %s is not in channel %s", user, channel)

    async def send(self, conversation: Conversation, item: Outbound) -> MessageRef | None:
        """Deliver one outbound item in the conversation's thread; Slack's refusals are raised as
        ``DeliveryFailed`` (``invalid_blocks`` on a question is permanent: the core falls back)."""
        channel, thread = conversation.chat_id, conversation.reply_to
        if isinstance(item, (TextReply, ErrorReply)) and item.private_to is not None:
            text = private_notice_mrkdwn(item.text, item.notice)
            if isinstance(item, ErrorReply):
                text = catalog.icon("warning") + " " + text
            await self._ephemeral(channel, item.private_to.user_id, text, thread)
            return None  # an ephemeral message cannot be updated or deleted
        if isinstance(item, (TextReply, LiveEnd)) and is_status(live := _live_of(item)):
            await self.agent.clear_status(live)  # an agent thread's status: the reply comes as a message
            return await self._reply(conversation, item) if isinstance(item, TextReply) else None
        if isinstance(item, TextReply) and item.live is not None:
            if await self.questions.hold(conversation, item, self.state()):
                return item.live  # the question that follows ends the stream (stream_question.py)
            return await self.live.finish(conversation, item, self.state())
        if isinstance(item, LiveEnd):
            await self.live.end(conversation, item.ref)
            return None
        if isinstance(item, TextReply):
            return await self._reply(conversation, item)
        if isinstance(item, ClarificationOut):
            closed = await self.questions.close(conversation, item, self.state())
            if closed is not None:
                return closed
            blocks = render_clarification(item)
            await self._clear_working(conversation)
            text, metadata = notification_text(item.request.question), delivery_metadata(item.delivery_id)
            ts = await self.sender.post(channel, text, blocks, thread, metadata)
            return self._ref(channel, ts, thread)
        if isinstance(item, ClarificationClosed):
            ref = item.view.message_ref
            if ref is None:
                return None
            line = answered_mrkdwn(item.view, item.answered_line)
            await self.sender.update(ref.chat_id, ref.message_id, line, render_closed(item.view, line))
            return ref
        if isinstance(item, ProgressUpdate):
            return await self._progress(conversation, item)
        if isinstance(item, ErrorReply):
            await self._clear_working(conversation)
            ts = await self.sender.post(
                channel,
                catalog.icon("warning") + " " + escape_mrkdwn(item.text),
                thread_ts=thread,
                metadata=delivery_metadata(item.delivery_id),
            )
            return self._ref(channel, ts, thread)
        return None

    async def _reply(self, conversation: Conversation, item: TextReply) -> MessageRef | None:
        """A reply, part by part; in a DM the bot is not a member of (a slash command typed in
        someone else's DM) through the command's ``response_url`` instead."""
        parts = render_reply(item.text)
        ask, last = item.feedback, len(parts) - 1

        async def post(numbered: tuple[int, str]) -> str:
            index, text = numbered  # 👍/👎 under the last part
            blocks = feedback_blocks(text, ask) if ask is not None and index == last else None
            return await self._post(
                conversation, text, blocks, delivery_metadata(item.delivery_id, index, len(parts))
            )

        try:
            # a part posted by an earlier attempt of this delivery is not posted again
            posted = await post_each_once(self.state(), item.delivery_id, list(enumerate(parts)), post)
        except DeliveryFailed as error:
            direct = conversation.is_direct
            url = await kept_url(self.state(), item.delivery_id, error) if direct else None
            if url is None:
                raise
            for text in parts:
                await self.sender.respond(url, text)
            return None
        return self._ref(conversation.chat_id, posted[-1] if posted else "", conversation.reply_to)

    async def _post(
        self,
        conversation: Conversation,
        text: str,
        blocks: list[dict[str, Any]] | None,
        metadata: dict[str, Any] | None = None,
    ) -> str:
        """Post reply text (``blocks``: the text with 👍/👎 under it; ``metadata``: its delivery id)
        in the conversation's thread; the finished "Working…" message becomes it when there is one
        (a question or a notice is posted on its own, the indicator removed)."""
        working = self._working.pop(conversation.thread_key, None)
        if working is not None:
            try:
                await self.sender.update(working.chat_id, working.message_id, text, blocks, metadata)
                return working.message_id
            except DeliveryFailed as error:  # deleted meanwhile, too old to edit: post it anew
                log.info("slack: could not edit the progress message: %s", error.code)
                await self._delete_quietly(working)
        return await self.sender.post(
            conversation.chat_id, text, blocks, thread_ts=conversation.reply_to, metadata=metadata
        )

    async def _clear_working(self, conversation: Conversation) -> None:
        working = self._working.pop(conversation.thread_key, None)
        if working is not None:
            await self._delete_quietly(working)

    async def _progress(self, conversation: Conversation, item: ProgressUpdate) -> MessageRef | None:
        """A "Working…" message while the agent runs; the reply that follows is edited into it."""
        channel, thread = conversation.chat_id, conversation.reply_to
        if self.agent.applies(conversation):  # the thread's status, not a "Working…" message
            if item.state == "started":
                return await self.agent.show_status(conversation, item.locale)
            if is_status(item.ref):
                await self.agent.clear_status(item.ref)
            return None
        if item.state == "started":
            ts = await self.sender.post(
                channel,
                catalog.icon("working") + " _" + ui_text("working", item.locale) + "_",
                thread_ts=thread,
            )
            return self._ref(channel, ts, thread)
        if item.ref is not None and item.reply_follows:
            # one chat.update of this message instead of a chat.delete and a new post
            if len(self._working) >= MAX_WORKING:  # a reply that never came (bounded all the same)
                self._working.pop(next(iter(self._working)))
            self._working[conversation.thread_key] = item.ref
        elif item.ref is not None:
            await self._delete_quietly(item.ref)
        return None

    async def _delete_quietly(self, ref: MessageRef) -> None:
        try:
            await self.sender.delete(ref.chat_id, ref.message_id)
        except DeliveryFailed as error:  # already gone: nothing left to tidy
            log.info("slack: could not delete the progress message: %s", error.code)

    @staticmethod
    def _ref(channel: str, ts: str, thread: str | None) -> MessageRef:
        """The reference of a message posted in ``channel`` (in ``thread`` when given)."""
        return MessageRef(
            platform=PLATFORM, chat_id=channel, message_id=ts, extra={"thread_ts": thread} if thread else {}
        )


def _live_of(item: TextReply | LiveEnd) -> MessageRef | None:
    """The live message a reply finishes or a ``LiveEnd`` closes."""
    return item.live if isinstance(item, TextReply) else item.ref
