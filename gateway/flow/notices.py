"""The language of the gateway's own short messages (errors, refusals, commands).

The agent answers in the language it is written to; these lines come from the
gateway itself, so they follow the same rule: Chinese when the person wrote
Chinese (or the question was asked in Chinese), else English. Their words are in
the one catalog (``clarigate.agent.protocol.catalog``).
"""

from __future__ import annotations

import re

from pydantic import ValidationError

from clarigate.agent.protocol import detect_locale
from clarigate.agent.protocol.catalog import age_text, text
from clarigate.agent.protocol.models import Locale
from clarigate.gateway.boundary.messages import AnswerJob, MessageJob
from clarigate.gateway.store.records import Job

__all__ = [
    "age_text",
    "job_locale",
    "language_hint",
    "locale_for",
    "notice",
    "notice_for_text",
    "text_locale",
]

_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")

#: The catalog's line in a language: the notices' name for ``catalog.text``, used all over the flow.
notice = text


#: What a command starts with: ``/``, or the full-width ``／`` a Chinese input method types.
COMMAND_SLASHES = ("/", "／")


def text_locale(words: str) -> Locale | None:
    """The language ``words`` are written in, or None when they give no sign of one.

    A leading command (``/start``, ``/help``) and its arguments (a deep-link payload) say nothing
    about the language, nor do digits, emoji or a lone letter.
    """
    if detect_locale(words) == "zh":
        return "zh"
    words = words.strip()
    if words.startswith(COMMAND_SLASHES):  # the command's name says nothing; /start's payload is a code
        command, _, rest = words.partition(" ")
        words = "" if command.split("@")[0].lower()[1:] == "start" else rest
    return "en" if _LATIN_WORD.search(words) else None


def locale_for(words: str, hint: Locale | None = None) -> Locale:
    """The language of ``words``; ``hint`` (the person's client language) when they have no signal."""
    return text_locale(words) or hint or "en"


def language_hint(language: str | None) -> Locale | None:
    """Our locale for a platform's language tag (``zh-hans``, ``en-US``), None when unknown."""
    if not language:
        return None
    return "zh" if language.lower().startswith("zh") else "en"


def notice_for_text(key: str, text: str, hint: Locale | None = None, **values: str) -> str:
    """The notice ``key`` in the language of ``text`` (what the person wrote), else of ``hint``."""
    return notice(key, locale_for(text, hint), **values)


def job_locale(job: Job) -> Locale:
    """The language of the gateway's lines for ``job``, as its run chose it: a message's words,
    else the person's interface language; an answer's words. Known again at delivery, for what a
    run recorded without its words (English when the job's data cannot be read)."""
    try:
        if job.kind == "answer":
            return locale_for(AnswerJob.model_validate_json(job.payload_json).text)
        message = MessageJob.model_validate_json(job.payload_json).message
    except ValidationError:
        return "en"
    return locale_for(message.text, language_hint(message.language))
