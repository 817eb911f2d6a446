"""Text people type, as Slack sends it, turned back into what they typed (pure functions).

Slack escapes ``&``, ``<`` and ``>`` as ``&amp;``, ``&lt;``, ``&gt;`` and wraps every
link, user, channel and special mention in ``<…>``: ``<https://x|label>``, ``<@U123>``,
``<#C1|general>``, ``<!here>``, ``<!subteam^S1|@team>``, ``<!date^…|fallback>``. The
core matches typed answers against option labels and the agent reads the words, so
both get plain text: URLs as URLs, people as ``@name``, channels as ``#name``. Text
going back out is escaped once, by ``markup.escape_mrkdwn``. A lone UTF-16 surrogate escaped in
the JSON (``\\ud800``) is made U+FFFD where a request is read (``without_lone_surrogates``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.request.async_internals import build_async_context
from slack_bolt.request.async_request import AsyncBoltRequest

from clarigate.gateway.boundary import surrogates

_CONTROL = re.compile(r"<([^<>]*)>")
_ENTITY = re.compile(r"&(amp|lt|gt);")
_ENTITIES = {"amp": "&", "lt": "<", "gt": ">"}
_USER_IDS = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>")
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:(//)?", re.IGNORECASE)
_DECODED_MENTION = re.compile(r"(?:@([UWS][A-Z0-9]+)|#([CG][A-Z0-9]+))(?![A-Za-z0-9])")
#: A channel mention Slack sent with no name (``<#C123|>``, ``<#C123>``): named by ``conversations.info``.
_BARE_CHANNEL = re.compile(r"<#([CG][A-Z0-9]+)\|?>")
#: A user group Slack mentions without its handle (``<!subteam^S123>``): named by ``usergroups.list``.
_BARE_GROUP = re.compile(r"<!subteam\^(S[A-Z0-9]+)\|?>")
#: Slack's special mentions: a broadcast (``<!here>``, ``<!channel>``, ``<!everyone>``, a label
#: after ``|`` in older messages) or a user group (``<!subteam^S123|@oncall>``); not ``<!date^…>``.
_GROUP_MENTION = re.compile(r"<!(?:here|channel|everyone|subteam\^[A-Z0-9]+)(?:\|[^>]*)?>")


def unescape(text: str) -> str:
    """``&amp;``, ``&lt;``, ``&gt;`` back to ``&``, ``<``, ``>``, in one pass (``&amp;lt;`` is ``&lt;``)."""
    return _ENTITY.sub(lambda m: _ENTITIES[m.group(1)], text)


def mentioned_user_ids(text: str) -> list[str]:
    """The user ids mentioned in Slack text (``<@U123>``), first mention first, each once."""
    return list(dict.fromkeys(_USER_IDS.findall(text)))


def mentions_a_group(text: str) -> bool:
    """Whether Slack text calls on a group of people: everyone here, in the channel or the
    workspace, or a user group (what a rich text block's ``broadcast`` and ``usergroup`` become)."""
    return _GROUP_MENTION.search(text) is not None


def unlabeled_channel_ids(text: str) -> list[str]:
    """The channels Slack text mentions without their name (``<#C123|>``), each once."""
    return list(dict.fromkeys(_BARE_CHANNEL.findall(text)))


def unlabeled_group_ids(text: str) -> list[str]:
    """The user groups Slack text mentions without their handle (``<!subteam^S123>``), each once."""
    return list(dict.fromkeys(_BARE_GROUP.findall(text)))


def name_mentions(decoded: str, names: Mapping[str, str]) -> str:
    """Decoded text with ``@U123``, ``@S123`` and ``#C123`` (mentions decoded before their names were
    known) as ``@name`` and ``#name`` for the ids in ``names`` (people's, groups' and channels' differ)."""
    if not names:
        return decoded

    def named(m: re.Match[str]) -> str:
        sign, key = ("@", m.group(1)) if m.group(1) else ("#", m.group(2))
        return sign + names.get(key, key)

    return _DECODED_MENTION.sub(named, decoded)


def _link(target: str, label: str | None) -> str:
    """A link as plain text: the URL, or what was typed when Slack linked it by itself."""
    url = unescape(target)
    if label is None:
        return url.removeprefix("mailto:")
    shown = unescape(label)
    bare = _SCHEME.sub("", url)
    if shown in (url, bare) or url.removeprefix("mailto:") == shown:
        return shown  # "example.com" typed, linked by Slack as <http://example.com|example.com>
    return f"{shown} ({url})"


def _control(inner: str, names: Mapping[str, str]) -> str:
    """One ``<…>`` sequence as plain text."""
    target, _, label = inner.partition("|")
    named = label or None  # Slack also sends an empty label: <#C123|>
    if target.startswith("@"):
        user = target[1:]
        name = names.get(user) or (unescape(named).lstrip("@") if named else user)
        return f"@{name}"
    if target.startswith("#"):  # no name: one looked up (``names``), else the id
        return f"#{unescape(named) if named else names.get(target[1:], target[1:])}"
    if target.startswith("!"):
        special, _, group = target[1:].partition("^")
        if named:  # <!subteam^S1|@team>, <!date^…|fallback>
            return unescape(named)
        if special == "subteam" and group:  # by id only (<!subteam^S1>): a handle looked up, else the id
            return f"@{names.get(group, group)}"
        return f"@{special}"  # <!here>, <!channel>, <!everyone>
    return _link(target, named)


def decode_text(text: str, names: Mapping[str, str] | None = None) -> str:
    """Slack message text as plain text: entities decoded, links and mentions spelled out.

    ``names`` maps user ids to the names to show (``@name``); an unknown user keeps the
    name Slack gave in ``<@U1|name>``, else the id (``@U123``), which is stable. A channel
    Slack sent without its name (``<#C1|>``) is named from ``names`` too, else its id (``#C1``);
    a user group without its handle (``<!subteam^S1>``) likewise (``@S1``).
    """
    known = names or {}
    out: list[str] = []
    last = 0
    for match in _CONTROL.finditer(text):
        out.append(unescape(text[last : match.start()]))
        out.append(_control(match.group(1), known))
        last = match.end()
    out.append(unescape(text[last:]))
    return "".join(out)


def without_lone_surrogates(request: AsyncBoltRequest, raw: bytes) -> AsyncBoltRequest:
    """``request`` with each lone surrogate in its parsed body, and so in the context Bolt reads
    from it, made U+FFFD (``surrogates``); the raw body (``raw``), which the signature covers, stays
    as sent. A body with no surrogate's escape, as good as every one, is left as Bolt read it."""
    if not surrogates.may_hold_surrogates(raw):
        return request
    request.body = surrogates.clean(request.body)
    request.context = build_async_context(AsyncBoltContext(), request.body)
    return request
