"""A question that ends a streamed answer: the stream's closing blocks, native and answerable.

A run that streamed its answer and then asks hands the adapter two items, the reply
(``TextReply.question_follows``) and the question, delivered one after the other. The reply leaves
its stream open, noted in the store (any replica or process may deliver the question: a hand-over
between the two is fine); the question stops it with ``chat.stopStream``: the answer's remaining
words and the last step's completion as its last chunks, the question's Block Kit controls as its
``blocks``, shown right under the answer in the same message. The question's reference keeps the
answer (``extra["lead"]``), so the message updated once answered still shows it above "Answered by".

Where the stream cannot carry them the answer is finished as ever (``LiveMessages.finish``) and the
question posted right under it: an answer longer than one message or than a stream shows, a stream
Slack ended or the person stopped, blocks Slack refuses (which then go on to the core's text
fallback as for any question).
"""

from __future__ import annotations

import logging

from clarigate.gateway.boundary.messages import Conversation, MessageRef
from clarigate.gateway.boundary.outbound_items import ClarificationOut, TextReply
from clarigate.gateway.boundary.port import AdapterState, DeliveryFailed

from .live import STREAM, STREAM_CHARS, LiveMessages, live_ref, piece_end, task_chunk, text_chunk
from .render import render_clarification, render_reply
from .send import SlackSender
from .stream_text import stream_piece

log = logging.getLogger(__name__)

#: How long a stream is left open for its question (Slack itself ends a stream after minutes).
HELD_SECONDS = 600


def held_key(conversation: Conversation) -> str:
    """The store key of the stream a conversation's question is to close."""
    return f"held_stream:{conversation.thread_key}"


def closing_chunks(ref: MessageRef, text: str) -> list[dict[str, str]]:
    """What a held stream still lacks: the step under way completed, then the answer's words it
    has not shown yet, in pieces Slack takes (as every streamed piece: escaped, unsafe links as
    their labels)."""
    chunks = []
    task = ref.extra.get("task")
    if task:
        chunks.append(task_chunk(task, ref.extra.get("task_title", ""), "complete"))
    start = int(ref.extra.get("streamed") or 0)
    while start < len(text):
        end = piece_end(text, start)
        end = end if end > start else len(text)  # the text's own end: nothing can follow a word there
        if piece := stream_piece(text[start:end], text[:start]):
            chunks.append(text_chunk(piece))
        start = end
    return chunks


class StreamQuestions:
    """Holds a streamed answer open for the question that follows it, and closes it with it."""

    def __init__(self, sender: SlackSender, live: LiveMessages) -> None:
        self.sender = sender
        self.live = live

    async def hold(self, conversation: Conversation, reply: TextReply, state: AdapterState | None) -> bool:
        """Leave the reply's stream open for the question that follows (True), when it can carry
        the whole answer: one message's worth, no more than a stream shows."""
        ref = reply.live
        if not reply.question_follows or state is None or ref is None or ref.extra.get("live") != STREAM:
            return False
        streamed = int(ref.extra.get("streamed") or 0)
        if len(reply.text) > STREAM_CHARS or streamed > len(reply.text) or len(render_reply(reply.text)) > 1:
            return False
        held = {"ref": ref.model_dump(mode="json"), "text": reply.text}
        await state.set_json(held_key(conversation), held, HELD_SECONDS)
        self.live.closed(conversation.workspace, ref.message_id)
        return True

    async def close(
        self, conversation: Conversation, item: ClarificationOut, state: AdapterState | None
    ) -> MessageRef | None:
        """Stop the held stream with the question's controls; its reference, or None when no
        stream waits for it (or it could not take them): the question is then posted as ever."""
        held = await state.get_json(held_key(conversation)) if state is not None else None
        if not held or state is None:
            return None
        ref, text = MessageRef.model_validate(held["ref"]), str(held["text"])
        try:
            blocks = render_clarification(item)
            await self.sender.stop_stream(ref.chat_id, ref.message_id, closing_chunks(ref, text), blocks)
        except DeliveryFailed as error:
            if not error.permanent:
                raise  # tried again: the stream is still held
            await state.delete(held_key(conversation))
            log.info("slack: the stream did not take the question (%s): it is posted under it", error.code)
            await self.live.finish(conversation, TextReply(text=text, live=ref), state)
            return None
        await state.delete(held_key(conversation))
        return live_ref(ref.chat_id, ref.message_id, conversation.reply_to, {"lead": text})
