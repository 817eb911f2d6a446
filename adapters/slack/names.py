"""What Slack says of people, asked once and kept for an hour: the names of a message's sender
and of the people it mentions, the bot's own (``shown_name``, at start: how people type it after
``@``), and a person's language (the agent view's suggested prompts, and what a command answers in
when its words and the conversation give none: ``named``).

One ``users.info`` with ``include_locale`` answers both, so a person is asked for once
(``PeopleBook``), by whichever caller comes first. The ack path reads only names known already
(``known``); the others are asked for where the job runs, before the agent reads the message
(``SlackAdapter.complete_message``, ``named``; an answer's sender, a click or a form carrying
its user id only, where the answer's job runs: ``named_sender``), every lookup of a message
sharing one short budget. A mention not named in time is shown as ``@U123``, which is stable,
and a sender keeps ``display_name`` None; a lookup still under way when the budget ends goes on (within the
client's timeout) for the next message, and a second message from the same person waits for it
instead of asking again. A language (``locale``) is asked for beside an ack: on the
short-timeout client, and never waited for longer than that client's timeout, even when a
name's lookup (on the keep-alive client) is the one under way. Without the ``users:read``
scope one warning says so and no one is asked for an hour; a person not had stays unnamed and
in English. A channel Slack mentions without its name (``<#C123|>``) is named the same way, in
the same book and budget, by ``conversations.info`` (``channels:read``; ``groups:read`` for a
private channel); without the scope, or for a channel the bot may not see, it stays ``#C123``
for an hour (said once, at info). A user group Slack mentions by id only (``<!subteam^S123>``)
is named alike by its handle, from ``usergroups.list`` (``usergroups:read``), else ``@S123``:
that method lists every group (and Slack allows it about 20 times a minute), so one call keeps all
their handles, and the groups asked for while it is under way share it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from clarigate.agent.bounded import BoundedDict
from clarigate.gateway.boundary.messages import InboundMessage, Sender
from clarigate.gateway.boundary.port import DeliveryFailed
from clarigate.gateway.flow.commands import parse_command

from .decode import name_mentions
from .send import ACK_PATH_TIMEOUT, UserInfo

log = logging.getLogger(__name__)

NAME_TTL_SECONDS = 3600.0
MAX_NAMES = 5000
LOOKUP_BUDGET_SECONDS = 0.8
BOT_NAME_BUDGET_SECONDS = 5.0  # the bot's own name, asked at start
SCOPE = "users:read"  # what users.info needs
CHANNEL_SCOPES = "channels:read (groups:read for private channels)"  # what conversations.info needs
GROUP_SCOPE = "usergroups:read"  # what usergroups.list needs
UNKNOWN = UserInfo(None, None)

Lookup = Callable[..., Awaitable[UserInfo]]  # (user id, *, ack_path) -> one users.info
GroupLookup = Callable[..., Awaitable[dict[str, str | None]]]  # (*, ack_path) -> group id -> handle


def is_channel(key: str) -> bool:
    """Whether a mentioned id is a channel's (``C…``, ``G…``), not a person's (``U…``, ``W…``)."""
    return key[:1] in ("C", "G")


def is_group(key: str) -> bool:
    """Whether a mentioned id is a user group's (``S…``)."""
    return key[:1] == "S"


class PeopleBook:
    """User id -> name and language, from ``lookup`` (``SlackSender.user_info``), and channel id
    -> name, from ``channel_lookup`` (``SlackSender.channel_info``), and user group id -> handle,
    from ``group_lookup`` (``SlackSender.usergroup_handles``: all groups at once), cached with an
    expiry; one lookup per id at a time (one for all groups), whoever asks."""

    def __init__(
        self, lookup: Lookup, channel_lookup: Lookup | None = None, group_lookup: GroupLookup | None = None
    ) -> None:
        self.lookup = lookup
        self.channel_lookup = channel_lookup
        self.group_lookup = group_lookup
        self._told: set[str] = set()  # the scopes said to be missing (channels', groups')
        self._people: BoundedDict[str, tuple[UserInfo, float]] = BoundedDict(MAX_NAMES, refresh=True)
        self._asking: dict[str, asyncio.Task[None]] = {}  # one lookup per person at a time
        self._listing: asyncio.Task[None] | None = None  # the usergroups.list under way, for all groups
        self._groups_wanted: set[str] = set()  # the group ids it is asked for
        self._off_until = 0.0  # no lookups before this (monotonic): the scope is missing
        self._warned = False

    def _cached(self, user_id: str, now: float) -> UserInfo | None:
        entry = self._people.get(user_id)
        return entry[0] if entry is not None and entry[1] > now else None

    async def _fetch(self, user_id: str, ack_path: bool) -> None:
        channel = is_channel(user_id)  # not a person
        lookup = self.channel_lookup if channel else self.lookup
        if lookup is None:
            return
        try:
            info = await lookup(user_id, ack_path=ack_path)
        except DeliveryFailed as error:
            log.debug("slack: nothing of %s: %s", user_id, error.code)
            if error.code == "missing_scope" and not channel:
                self._scope_missing()
                return
            if error.code == "missing_scope":
                self._channel_scope_missing(CHANNEL_SCOPES)  # that channel only: others may be granted
            elif not error.permanent:
                return  # a timeout, … (the ack path's short one too): the next caller asks again
            info = UNKNOWN  # user_not_found, channel_not_found, …: no use asking within the hour
        except Exception as error:  # noqa: BLE001 - a nicety: the id and English stand in for it
            log.debug("slack: nothing of %s: %s", user_id, type(error).__name__)
            return
        self._people[user_id] = (info, time.monotonic() + NAME_TTL_SECONDS)

    async def _fetch_groups(self, ack_path: bool) -> None:
        """One ``usergroups.list``: every group's handle kept, and each id asked for that it does not
        list kept as unknown (its id stands in), for an hour; all unknown without the scope."""
        try:
            handles = await self.group_lookup(ack_path=ack_path) if self.group_lookup else None
        except DeliveryFailed as error:
            log.debug("slack: no user groups: %s", error.code)
            handles = None if not error.permanent else {}  # a timeout, …: the next caller asks again
            if error.code == "missing_scope":
                self._channel_scope_missing(GROUP_SCOPE)
        except Exception as error:  # noqa: BLE001 - a nicety: the ids stand in for the handles
            log.debug("slack: no user groups: %s", type(error).__name__)
            handles = None
        wanted, self._groups_wanted = self._groups_wanted, set()
        self._listing = None  # from here on, a group asked for makes a new call
        if handles is not None:
            expires = time.monotonic() + NAME_TTL_SECONDS
            for group_id in wanted | handles.keys():
                self._people[group_id] = (UserInfo(handles.get(group_id), None), expires)

    def _ask_groups(self, group_id: str, ack_path: bool) -> asyncio.Task[None]:
        """The ``usergroups.list`` under way (else a new one), asked for ``group_id`` too."""
        self._groups_wanted.add(group_id)
        if self._listing is None:
            task = self._listing = asyncio.ensure_future(self._fetch_groups(ack_path))
            task.add_done_callback(self._listed)
        return self._listing

    def _listed(self, task: asyncio.Task[None]) -> None:
        """A ``usergroups.list`` cancelled before it ran: the next group asked for makes a new call."""
        if self._listing is task:
            self._listing, self._groups_wanted = None, set()

    def _scope_missing(self) -> None:
        """Slack says the app may not read people: no lookups for an hour, one warning a process."""
        self._off_until = time.monotonic() + NAME_TTL_SECONDS
        if not self._warned:
            self._warned = True
            log.warning("slack: grant the %s scope to show people's names, not user ids", SCOPE)

    def _channel_scope_missing(self, scope: str) -> None:
        """Slack says the app may not read a channel (a user group): said once a process for each
        ``scope`` (the id stands in)."""
        if scope not in self._told:
            self._told.add(scope)
            log.info("slack: grant %s to show channels' and user groups' names, not their ids", scope)

    def _ask(self, user_id: str, ack_path: bool = False) -> asyncio.Task[None]:
        if is_group(user_id):
            return self._ask_groups(user_id, ack_path)
        task = self._asking.get(user_id)
        if task is None:
            task = self._asking[user_id] = asyncio.ensure_future(self._fetch(user_id, ack_path))
            task.add_done_callback(lambda _: self._asking.pop(user_id, None))
        return task

    def known(self, user_ids: list[str]) -> dict[str, str]:
        """The names of ``user_ids`` known already, without asking Slack (for the ack path)."""
        now = time.monotonic()
        found = {u: self._cached(u, now) for u in user_ids}
        return {u: info.name for u, info in found.items() if info is not None and info.name}

    def known_locale(self, user_id: str) -> str | None:
        """``user_id``'s Slack language (``zh-CN``) if known already, without asking Slack."""
        info = self._cached(user_id, time.monotonic())
        return info.locale if info is not None else None

    def will_know_locale(self, user_id: str) -> bool:
        """Whether ``locale`` would ask Slack about ``user_id``: not had yet, and ``users:read`` not
        known to be missing."""
        now = time.monotonic()
        return self._cached(user_id, now) is None and self._off_until <= now

    async def names(self, user_ids: list[str], budget: float = LOOKUP_BUDGET_SECONDS) -> dict[str, str]:
        """The names known for ``user_ids`` (channel ids too) after at most ``budget`` seconds of asking."""
        now = time.monotonic()
        missing = [u for u in dict.fromkeys(user_ids) if u and self._cached(u, now) is None]
        if self._off_until > now:  # users:read missing: channels and groups are still asked for
            missing = [u for u in missing if is_channel(u) or is_group(u)]
        if missing:
            # not cancelled at the budget's end: a late answer is kept for the next message
            await asyncio.wait([self._ask(u) for u in missing], timeout=budget)
        return self.known(user_ids)

    async def locale(self, user_id: str) -> str | None:
        """``user_id``'s Slack language (``zh-CN``), or None, asked (if not known) on the ack
        path's client and waited for no longer than its timeout, whoever's lookup is under way."""
        now = time.monotonic()
        info = self._cached(user_id, now)
        if info is None and self._off_until <= now:
            # not cancelled when the wait ends: a name's lookup under way for a message goes on
            await asyncio.wait([self._ask(user_id, ack_path=True)], timeout=ACK_PATH_TIMEOUT)
            info = self._cached(user_id, time.monotonic())
        return info.locale if info is not None else None


async def named(book: PeopleBook, message: InboundMessage) -> InboundMessage:
    """``message`` with its sender's display name and its ``@U123`` and ``#C123`` mentions (in its text and in
    the messages shared into it) named, and a command (``/help``, ``@clarigate status``) with its
    sender's Slack language (``InboundMessage.language``, which the core answers a command in when
    its words, the open question and the person's last request say nothing; one ``users.info``
    brings both), as far as ``book`` gets them within one budget; the ids stand for the names it
    does not get. Other messages carry no language (the agent's ``locale`` is None on Slack)."""
    sender = message.sender
    language = not message.language and parse_command(message.text) is not None
    asking = [*([] if sender.display_name and not language else [sender.user_id]), *message.unnamed_mentions]
    if not asking:
        return message
    names = await book.names(asking)
    update: dict[str, object] = {}
    if language and (locale := book.known_locale(sender.user_id)):
        update["language"] = locale
    if message.unnamed_mentions:
        # a shared message (``shared.py``, the ``other`` kind) names the people it mentions too
        shared = [
            a.model_copy(update={"name": name_mentions(a.name, names)}) if a.kind == "other" else a
            for a in message.attachments
        ]
        update = {"text": name_mentions(message.text, names), "attachments": shared, "unnamed_mentions": ()}
    if not sender.display_name and names.get(sender.user_id):
        update["sender"] = sender.model_copy(update={"display_name": names[sender.user_id]})
    return message.model_copy(update=update) if update else message


async def named_sender(book: PeopleBook, sender: Sender) -> Sender:
    """An answer's sender (a click, a form: the user id only) named as ``named`` names a message's:
    the same book, lookup and budget; the id stands for a name it does not get."""
    if sender.display_name:
        return sender
    name = (await book.names([sender.user_id])).get(sender.user_id)
    return sender.model_copy(update={"display_name": name}) if name else sender


async def shown_name(book: PeopleBook, bot_user_id: str | None, handle: str | None) -> str | None:
    """The bot's name as Slack shows it and people type it after ``@``: its bot user's, as anyone's
    (``users.info``: display name, else real name), asked once at start (and kept in ``book``);
    ``handle`` (``auth.test``'s ``user``: the bot user's username, which may read otherwise) when
    Slack does not say (``users:read`` not granted, Slack slow or away)."""
    if not bot_user_id:
        return handle
    names = await book.names([bot_user_id], budget=BOT_NAME_BUDGET_SECONDS)
    return names.get(bot_user_id) or handle
