"""The ``/clarigate`` slash command and ``@clarigate cancel``, mapped onto the core's neutral commands.

Slack takes a message that starts with ``/`` as a slash command, so ``/new`` cannot be
typed to the bot; ``/clarigate new|cancel|help|status`` can. The command arrives on the
same request URL (or Socket Mode) as events, form-encoded, and without its thread: in a
classic bot's DM it speaks to the DM's conversation; in a channel, and in an agent app's DM
(``slack.agent_view``), where every conversation is a thread, it cannot say which one, so
the person is told (privately) to mention the bot in the thread instead and nothing else
happens: ``@clarigate cancel`` there is the same command, and the core's lines name commands
that way there (``mention_spelling``). Anything else after ``/clarigate`` (or nothing) asks
for help.
"""

from __future__ import annotations

from typing import Any

from clarigate.agent.protocol import catalog
from clarigate.agent.protocol.catalog.command_words import command_alias
from clarigate.agent.protocol.models import Locale
from clarigate.gateway.boundary.messages import Conversation, InboundMessage, Sender
from clarigate.gateway.flow.commands import TRAILING_PUNCTUATION, help_text
from clarigate.gateway.flow.notices import language_hint, locale_for

from .receive import PLATFORM

SUBCOMMANDS = ("new", "cancel", "help", "status")


def is_subcommand(name: str) -> bool:
    """True for a subcommand's name or another name of it (``取消``: the catalog's ``command_words``),
    passed on as typed so that the core answers in its language."""
    return name in SUBCOMMANDS or command_alias(name) in SUBCOMMANDS


def neutral_command(text: str) -> str:
    """``new`` -> ``/new`` (words after it kept; sentence punctuation after the name allowed, as the
    core's commands allow it: ``cancel.``, ``new!``); ``取消`` -> ``/取消``; anything unknown -> ``/help``."""
    words = text.strip().split(maxsplit=1)
    name = words[0].lower().lstrip("/").rstrip(TRAILING_PUNCTUATION) if words else ""
    if not is_subcommand(name):
        return "/help"
    return f"/{name} {words[1]}" if len(words) > 1 else f"/{name}"


def mention_command(text: str) -> str | None:
    """The neutral command a mention alone with a subcommand stands for (``@clarigate cancel``,
    sentence punctuation after it allowed as the core's commands allow it: ``@clarigate cancel.``;
    another name of it as typed: ``@clarigate 取消`` -> ``/取消``)."""
    words = text.strip().lower().split()
    name = words[0].lstrip("/").rstrip(TRAILING_PUNCTUATION) if len(words) == 1 else ""
    return f"/{name}" if is_subcommand(name) else None


def mention_spelling(bot_name: str | None, name: str) -> str:
    """Command ``name`` as typed in a thread (a channel's, an agent app's DM's), which no slash
    command reaches: the bot mentioned, then the command (``mention_command``), as plain
    ``@<bot's name> name`` (a ``<@U…>`` in the bot's own message text is escaped,
    ``escape_mrkdwn``); ``@clarigate`` while the name is unknown, as ``in_thread_hint`` has it."""
    return f"@{bot_name or 'clarigate'} {name}"


def _bot(bot_user_id: str | None) -> str:
    """The bot as a private answer names it: a mention (Slack shows its name), ``@clarigate``
    while its user id is unknown."""
    return f"<@{bot_user_id}>" if bot_user_id else "@clarigate"


def hint_locale(words: str, language: str | None) -> Locale:
    """The language of the words typed after ``/clarigate`` (the first, a command's name, says
    nothing, as the core's commands have it), else of Slack's ``language`` tag, else English."""
    return locale_for(f"/{words.strip()}", language_hint(language))


def in_thread_hint(
    bot_user_id: str | None, words: str = "", key: str = "commands_in_thread", language: str | None = None
) -> str:
    """What a slash command typed in a channel answers (privately): where commands work there,
    in the language ``hint_locale`` gives (``language``: the person's Slack language, when
    known: ``zh-CN``); ``key``: the catalog line that says so (an agent app's
    DM has its own)."""
    spelled = {name: f"{_bot(bot_user_id)} {name}" for name in SUBCOMMANDS}
    return catalog.text(key, hint_locale(words, language), **spelled)


def agent_dm_hint(bot_user_id: str | None, words: str = "", language: str | None = None) -> str:
    """What a slash command typed in an agent app's DM answers (privately): it did nothing, as it
    cannot say which of the DM's threads (each a conversation) it is for, and how the command is
    typed in the thread; ``help`` (or anything unknown) answers with the commands so spelled.
    In the language ``in_thread_hint`` answers in."""
    name = neutral_command(words).split()[0].lstrip("/")
    if (command_alias(name) or name) != "help":  # (``帮助`` is help too)
        return in_thread_hint(bot_user_id, words, "slack_agent_slash", language)
    locale = hint_locale(words, language)
    intro = f"{catalog.text('help', locale)}\n\n{catalog.text('slack_agent_commands', locale)}"
    return help_text(locale, lambda name: f"{_bot(bot_user_id)} {name}", intro=intro)


def command_hint(
    body: dict[str, Any], bot_user_id: str | None, agent_view: bool, language: str | None = None
) -> str:
    """The private answer of a slash command that does not reach the core (``parse_command``);
    ``language``: the person's Slack language, if known (it is not asked for before the ack)."""
    words = str(body.get("text") or "")
    if agent_view and is_dm(body):
        return agent_dm_hint(bot_user_id, words, language)
    return in_thread_hint(bot_user_id, words, language=language)


def is_dm(body: dict[str, Any]) -> bool:
    """True for a slash command typed in a DM (a channel id ``D…``)."""
    return str(body.get("channel_id") or "").startswith("D")


def parse_command(body: dict[str, Any], agent_view: bool = False) -> InboundMessage | None:
    """The ``InboundMessage`` a slash command in a DM stands for; None elsewhere (a channel, or any
    DM of an agent app, ``agent_view``: the command does not name the thread, which is the
    conversation there) or when it names no channel or user."""
    channel, user = body.get("channel_id"), body.get("user_id")
    if not channel or not user or not is_dm(body) or agent_view:
        return None
    conversation = Conversation(
        platform=PLATFORM,
        workspace=str(body.get("team_id") or ""),
        chat_id=str(channel),
        topic=None,
        is_direct=True,
    )
    return InboundMessage(
        conversation=conversation,
        sender=Sender(user_id=str(user)),
        text=neutral_command(str(body.get("text") or "")),
        # A command has no event id; its trigger id is unique and a replay carries the same one.
        event_id=f"command:{body.get('trigger_id') or ''}",
    )
