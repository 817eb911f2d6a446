"""Messages shared into a message ("Share message", "Forward"): what the agent is told of them.

Slack puts a shared message in the sharing message's ``attachments``, one a shared message,
marked ``is_share`` (a message shared or forwarded) or ``is_msg_unfurl`` (a link to a Slack
message, shown as that message): its ``text`` (Slack's markup, as any message's), a
``fallback`` line, ``author_name`` (the name Slack shows for its writer), ``author_id``,
``from_url``, ``channel_id``, ``ts``. The sharing message's own ``text`` is what its writer
added, often nothing. Link previews of other sites (attachments without either mark) are not
messages: left out.

A shared message is described like anything else that came with a message: an ``Attachment``
of the ``other`` kind whose name the agent reads (``shared message from Ann: “…”``), never the
writer's own words: its text answers no question typed, names no command, and a mention of the
bot in it calls nobody. It is someone else's text: the agent reads it, nothing renders it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clarigate.gateway.boundary.messages import Attachment

from .decode import decode_text, mentioned_user_ids


def shared_messages(event: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The attachments of a message event that are Slack messages shared into it."""
    attachments = event.get("attachments")
    if not isinstance(attachments, list):
        return []
    return [
        a
        for a in attachments
        if isinstance(a, dict) and (a.get("is_share") is True or a.get("is_msg_unfurl") is True)
    ]


def _text_of(shared: Mapping[str, Any]) -> str:
    """A shared message's text as Slack sends it: its ``text``, else its ``fallback`` line."""
    text = shared.get("text")
    if not isinstance(text, str) or not text.strip():
        text = shared.get("fallback")
    return text.strip() if isinstance(text, str) else ""


def mentioned_in(event: Mapping[str, Any]) -> list[str]:
    """The user ids a message mentions, in its own text and in the messages shared into it."""
    said = [str(event.get("text") or ""), *(_text_of(s) for s in shared_messages(event))]
    return mentioned_user_ids("\n".join(said))


def _author(shared: Mapping[str, Any], names: Mapping[str, str]) -> str:
    """Who wrote a shared message, as Slack shows them (``author_name``); "" when not said."""
    for field in ("author_name", "author_subname"):
        name = shared.get(field)
        if isinstance(name, str) and name.strip():
            return name.strip()
    author_id = shared.get("author_id")
    return names.get(author_id, "") if isinstance(author_id, str) else ""


def shared_attachment(shared: Mapping[str, Any], names: Mapping[str, str] | None = None) -> Attachment:
    """A shared message as the agent reads it: ``shared message from Ann: “text”`` (decoded as
    typed text is, ``names`` naming the people it mentions); the author left out when unknown,
    the text when it has none."""
    known = names or {}
    author = _author(shared, known)
    what = f"shared message from {author}" if author else "shared message"
    text = decode_text(_text_of(shared), known)
    return Attachment(kind="other", name=f"{what}: “{text}”" if text else what)


def shared_attachments(event: Mapping[str, Any], names: Mapping[str, str] | None = None) -> list[Attachment]:
    """Every message shared into a message event, as ``shared_attachment`` describes it."""
    return [shared_attachment(s, names) for s in shared_messages(event)]
