"""Bot commands: Telegram's ``/cmd``, ``/cmd@thisbot`` mapped onto the gateway's neutral commands.

The core handles ``/start``, ``/help``, ``/new``, ``/cancel`` and ``/status`` for every
platform (``clarigate.gateway.boundary.port``); this module only reads Telegram's syntax:

- ``/cmd`` and ``/cmd@thisbot`` (any letter case) become ``/cmd`` plus its words, so a
  deep link's ``/start payload`` keeps its payload;
- ``/cmd@otherbot`` is another bot's: ignored whatever it says;
- ``/ask@thisbot …`` is a request (the words after it), the way to start a conversation in a
  group whose bot runs in Telegram's default privacy mode, where plain @mentions never arrive;
  ``@thisbot /ask …`` (where mentions arrive) is the same request: a command written right after
  the bot's @mention is read as ``/cmd@thisbot`` (``parse_command``);
  never an answer: a question or form still open closes as for any new message (``Command.asks``);
- any other command is not a command of ours (see ``Command.neutral_text``): the agent reads
  it as ``/cmd words``, the addressee dropped.

A photo's or document's caption is read like a message's text (Telegram marks its commands in
``caption_entities``), so ``/ask@thisbot what is this diagram?`` under a photo asks about it; the
photo goes with any command to the core, where ``/new`` starts the new conversation with it and the
other commands say it was not passed on (``clarigate.gateway.flow.commands``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from telegram import BotCommand, Message, MessageEntity

from clarigate.agent.protocol import catalog
from clarigate.agent.protocol.models import Locale
from clarigate.gateway.boundary.messages import Conversation

from .receive import DM_TOPIC, message_text

NEUTRAL_COMMANDS = ("start", "help", "new", "cancel", "status")
ASK = "ask"

#: The menu's commands in order: the core's words for each (``cmd_<name>``), as /help lists them.
MENU_COMMANDS = ("ask", "new", "cancel", "status", "help")


def ask_spelling(username: str) -> str:
    """``/ask`` as a group needs it: addressed to the bot by name (``/ask@clari_bot``)."""
    return f"/{ASK}@{username}" if username else f"/{ASK}"


def group_help(conversation: Conversation, username: str, locale: Locale) -> str | None:
    """What ``/help`` says first in a group: ``/ask@thisbot …`` or a reply, as privacy mode hides the
    rest. None (the core's words) where every message is the bot's: a private chat, or a person's
    topic of a channel's direct messages chat (``DM_TOPIC``, ``receive.one_to_one``)."""
    if conversation.is_direct or (conversation.topic or "").startswith(DM_TOPIC) or not username:
        return None
    return catalog.text("help_telegram_group", locale, ask=ask_spelling(username))


def menu(locale: Locale, username: str) -> list[BotCommand]:
    """What ``setMyCommands`` registers for ``locale``: each command described as /help does,
    ``/ask`` with the bot's own name (``username``, known after ``getMe``)."""
    ask = ask_spelling(username)
    return [BotCommand(name, catalog.text(f"cmd_{name}", locale, ask=ask)) for name in MENU_COMMANDS]


def menus(username: str) -> dict[str | None, list[BotCommand]]:
    """The menu per interface language (Telegram shows it in the person's app language, falling
    back to the default list, ``None``)."""
    return {None: menu("en", username), "zh": menu("zh", username)}


@dataclass(frozen=True)
class Command:
    """A command at the start of a message: its name (lower case), words, and addressee."""

    name: str
    args: str
    for_us: bool  # ``/cmd`` (no addressee) or ``/cmd@thisbot``
    explicit: bool  # ``/cmd@thisbot``: addressed to this bot by name
    word: str = ""  # the command as written, without its addressee: ``/Deploy``

    @property
    def known(self) -> bool:
        """One of the commands the gateway handles (or ``/ask``)."""
        return self.name in NEUTRAL_COMMANDS or self.name == ASK

    @property
    def asks(self) -> bool:
        """``/ask …`` with words: a new request asked for explicitly, never an answer to a question
        (``InboundMessage.new_request``)."""
        return self.name == ASK and bool(self.args)

    def neutral_text(self) -> str | None:
        """What the core receives: ``/name words`` for its commands, the request for ``/ask``,
        ``/help`` for an empty ``/ask``; None for commands the gateway does not know."""
        if self.name in NEUTRAL_COMMANDS:
            return f"/{self.name} {self.args}".strip()
        if self.name == ASK:
            return self.args or "/help"
        return None

    def as_text(self) -> str:
        """The message as the agent reads it when the command is not ours: ``/cmd words``
        (``/foo@thisbot hello`` is ``/foo hello``, not ``/foohello``)."""
        return f"{self.word} {self.args}".strip()


def parse_command(message: Message, bot_username: str) -> Command | None:
    """The command a message or caption starts with (Telegram marks it with a ``bot_command``
    entity), or None; one right after the bot's @mention (``@thisbot /ask …``, ``@thisbot
    /cancel``) is read as ``/ask@thisbot …`` is (``_after_mention``)."""
    if message.forward_origin is not None:
        return None  # someone else's words, forwarded
    text = message_text(message)  # links spelled out after the command, which is at the start
    entities = message.entities if message.text else message.caption_entities
    entity = next((e for e in entities if e.type == "bot_command" and e.offset == 0), None)
    if entity is not None:
        return _command(text[: entity.length], text[entity.length :], bot_username)
    entity = _after_mention(text, entities, bot_username)
    if entity is None:
        return None
    end = entity.offset + entity.length
    command = _command(text[entity.offset : end], text[end:], bot_username, mentioned=True)
    return command if command.for_us else None  # ``@thisbot /cmd@otherbot``: read as plain text


def _after_mention(text: str, entities: Sequence[MessageEntity], bot_username: str) -> MessageEntity | None:
    """The ``bot_command`` entity right after a leading @mention of the bot (the mention, the
    spaces and a command are ASCII: UTF-16 offsets match characters here), or None."""
    handle = f"@{bot_username}".lower()
    if not bot_username or not text.lower().startswith(handle):
        return None
    if not any(e.type == "mention" and e.offset == 0 and e.length == len(handle) for e in entities):
        return None  # ``@thisbotany``: someone else
    start = len(text) - len(text[len(handle) :].lstrip())  # past the spaces after the mention
    if start == len(handle):
        return None
    return next((e for e in entities if e.type == "bot_command" and e.offset == start), None)


def _command(token: str, rest: str, bot_username: str, mentioned: bool = False) -> Command:
    """``/name@addressee`` and the words after it (a command is ASCII: its entity's UTF-16 offsets
    match characters); ``mentioned``: after the bot's @mention, addressed to it as ``/name@thisbot``."""
    name, _, addressee = token[1:].partition("@")
    for_us = not addressee or addressee.lower() == bot_username.lower()
    return Command(
        name=name.lower(),
        args=rest.strip(),
        for_us=for_us,
        explicit=(bool(addressee) or mentioned) and for_us,
        word=f"/{name}",
    )
