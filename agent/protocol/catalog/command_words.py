"""The catalog's other names of the conversation commands (``clarigate.gateway.flow.commands``):
what people type for ``/new``, ``/cancel``, ``/status`` and ``/help`` in their own words; and of
the commands a platform handles itself (``PlatformAdapter.own_commands``): the terminal's ``/quit``.

A name is a whole command word, compared in lower case with sentence punctuation after it allowed
(``/取消。``); a longer word that starts with one is not a command (``/取消订单`` goes to the agent).
Telegram's bot commands take only ``a-z0-9_``, so its menu keeps the English names.
"""

from __future__ import annotations

from collections.abc import Callable

from ..models import Locale

#: Other names of each neutral command, by language.
COMMAND_ALIASES: dict[str, dict[Locale, tuple[str, ...]]] = {
    "new": {"en": ("reset",), "zh": ("新对话", "重新开始")},
    "cancel": {"en": (), "zh": ("取消",)},
    "status": {"en": (), "zh": ("状态",)},
    "help": {"en": (), "zh": ("帮助",)},
}

#: Other names of the commands a platform handles itself, by language: no command of the core's
#: (``/退出`` is a request where there is no ``/quit``), listed by ``/help`` where the command is.
OWN_COMMAND_ALIASES: dict[str, dict[Locale, tuple[str, ...]]] = {
    "quit": {"en": (), "zh": ("退出",)},
}


def command_alias(word: str) -> str | None:
    """The neutral command ``word`` (lower case, no slash) is another name of, or None."""
    return next(
        (name for name, names in COMMAND_ALIASES.items() if any(word in words for words in names.values())),
        None,
    )


def names_of(command: str) -> tuple[str, ...]:
    """Every word (lower case, no slash) that types the platform's own ``command``: its name and
    its other names in every language (``quit``, ``退出``)."""
    names = OWN_COMMAND_ALIASES.get(command, {})
    return (command, *(alias for words in names.values() for alias in words))


def aliases_line(locale: Locale, spell: Callable[[str], str], extra: tuple[str, ...] = ()) -> list[str]:
    """``/help``'s last line in Chinese: the commands' Chinese names, as ``spell`` writes a command
    where the help is shown (``/取消``, Slack's ``@clarigate 取消``), then those of the platform's
    own commands it lists (``extra``: the terminal's ``/退出``); none in English."""
    if locale != "zh":
        return []
    from . import joined, text  # the package's own helpers, loaded by the time help is asked

    own = [OWN_COMMAND_ALIASES[name] for name in extra if name in OWN_COMMAND_ALIASES]
    names = [spell(alias) for words in [*COMMAND_ALIASES.values(), *own] for alias in words[locale]]
    return [text("command_aliases", locale, aliases=joined(names, locale))]


#: ``/help``'s line naming the other names, in Chinese only (``commands.help_text``).
COMMAND_WORDS: dict[str, dict[Locale, str]] = {
    "command_aliases": {"en": "Also in Chinese: {aliases}", "zh": "也可以输入中文命令：{aliases}"},
}
