"""Who is talking and where, for the agent: the run's speaker (``clarigate.agent.who``) from the
normalized conversation and sender, with what the bot's settings add (its id, the answer policy);
the run's metadata (``run_metadata``)."""

from __future__ import annotations

from clarigate.agent.who import Speaker
from clarigate.gateway.boundary.messages import Conversation, Sender
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.runtime.routes import DEFAULT_ROUTE
from clarigate.gateway.store.records import Job


def speaker_for(
    config: GatewayConfig,
    conv: Conversation,
    sender: Sender,
    *,
    locale: str | None = None,
    may_answer: bool = True,
) -> Speaker:
    """The speaker of a run for ``sender``'s message (or answer) in ``conv``.

    ``locale``: the person's interface language when the platform says; ``may_answer``: False
    when the thread's open question is someone else's and stays open while this message runs.
    """
    return {
        "bot_id": config.bot_id,
        "agent": DEFAULT_ROUTE,  # a route's name once the runner has chosen (``runners.routed``)
        "sender": {
            "user_id": sender.user_id,
            "display_name": sender.display_name or None,
            "locale": locale or None,
            "may_answer": may_answer,
        },
        "conversation": {
            "platform": conv.platform,
            "workspace": conv.workspace or None,
            "chat_id": conv.chat_id,
            "thread": conv.topic or None,
            "chat_type": conv.chat_type,
            "answer_policy": config.answer_policy,
        },
    }


def run_metadata(conv: Conversation, job: Job) -> dict[str, str]:
    """What a run carries besides its thread: the inbound id (it names the turn, whose earlier run a
    runner resumes or joins) and where the conversation is (tracing, a server's thread metadata)."""
    meta = {"inbound_id": job.inbound_id, "platform": conv.platform, "chat_id": conv.chat_id}
    if conv.workspace:
        meta["workspace"] = conv.workspace
    if conv.topic:
        meta["topic"] = conv.topic
    return meta
