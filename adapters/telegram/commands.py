"""Bot commands: Telegram's ``/cmd``, ``/cmd@thisbot`` mapped onto the gateway's neutral commands.

The core handles ``/start``, ``/help``, ``/new``, ``/cancel`` and ``/status`` for every
platform (``clarigate.gateway.boundary.port``); this module only reads Telegram's syntax:

- ``/cmd`` and ``/cmd@thisbot`` (any letter case) become ``/cmd`` plus its words, so a
  deep link's ``/start payload`` keeps its payload;
- ``/cmd@otherbot`` is another bot's: ignored whatever it says;
- ``/ask@thisbot …`` is a request (the words after it), the way to start a conversation in a
  group whose bot runs in Telegram's default privacy mode, where plain @mentions never arrive;
  never an answer: a question or form still open closes as for any new message (``Command.asks``);
- any other command is not a command of ours (see ``Command.neutral_text``): the agent reads
  it as ``/cmd words``, the addressee dropped.

A photo's or document's caption is read like a message's text (Telegram marks its commands in
``caption_entities``), so ``/ask@thisbot what is this diagram?`` under a photo asks about it; the
photo goes with any command to the core, where ``/new`` starts the new conversation with it and the
other commands say it was not passed on (``clarigate.gateway.flow.commands``).
"""

from __future__ import annotations

from dataclasses import dataclass

from telegram import BotCommand, Message

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
    entity), or None."""
    if message.forward_origin is not None:
        return None  # someone else's words, forwarded
    text = message_text(message)  # links spelled out after the command, which is at the start
    entities = message.entities if message.text else message.caption_entities
    entity = next((e for e in entities if e.type == "bot_command" and e.offset == 0), None)
    if entity is None:
        return None
    # Entity offsets count UTF-16 code units; a command is ASCII, so they match characters here.
    token = text[: entity.length]
    name, _, addressee = token[1:].partition("@")
    for_us = not addressee or addressee.lower() == bot_username.lower()
    return Command(
        name=name.lower(),
        args=text[entity.length :].strip(),
        for_us=for_us,
        explicit=bool(addressee) and for_us,
        word=f"/{name}",
    )
