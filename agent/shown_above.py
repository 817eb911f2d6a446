"""What a question cannot hold, shown in full right above it.

The protocol's strings hold 200 characters (``MAX_STRING``); an interrupt's value may hold more:
a graph's text of several paragraphs, the content a review asks about, the calls an approval runs
(``clarigate.agent.approvals``). Nothing a person decides on may be cut away unseen, so the request
keeps within the protocol (its question, and as much of the rest as fits) and what it cut goes,
in full, into the turn's replies right before the question (``interrupt_kinds.asking``): every
platform escapes a reply and splits it into messages within its limits. The question's context
then says so; a question shown again later (``clarigate chat`` going on with it) comes with the
same text above it (``pending_asked``). A request with nothing above it (``above=False``: which
question a thread waits for, ``pending_request``) keeps what fits and says nothing of text above.
"""

from __future__ import annotations

import re

from clarigate.agent.protocol import catalog, detect_locale
from clarigate.agent.protocol.coerce import clean, cut
from clarigate.agent.protocol.models import MAX_STRING

#: Where a sentence ends: after ". ", "! ", "? ", or right after "。", "！", "？" (no space in Chinese).
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")
_BACKTICKS = re.compile("`+")


def code_block(text: str) -> str:
    """``text`` as a Markdown code block: shown as written on every platform (no markup, no
    mention, every character), whatever it holds (its fence is longer than any run of backticks
    in it, so no line of it closes the block)."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


def split_question(text: str) -> tuple[str, str]:
    """``(what leads up to it, the question)`` of a text that ends in a question: its last line,
    or the last sentences of that line, that fit in a question; ``(text, "")`` when it does not
    end in one or no such tail fits."""
    body = text.rstrip()
    if not body.endswith(("?", "？")):
        return text, ""
    line_start = body.rfind("\n") + 1
    starts = [line_start, *(m.end() for m in _SENTENCE_END.finditer(body, line_start))]
    for start in starts:  # the longest tail first: the whole line, then fewer sentences
        asked = body[start:].strip()
        if asked and len(asked) <= MAX_STRING:
            return body[:start].rstrip(), asked
    return text, ""


def fit_question(
    question: str, context: str, above: bool, room: int = MAX_STRING
) -> tuple[str, str, str | None]:
    """``(question, context, shown above)`` for a question and its context of any length.

    Both fit (the context in ``room``: less than a string holds when lines of ours join it): as
    they are, nothing above. A question too long is split (``split_question``): its leading text
    joins the context. What still does not fit is, with ``above``, shown in full above (a code
    block, all of it: the person reads it in one piece), and the context says so; a text with no
    question of its own is asked "What is your answer to the text above?".
    Without ``above``: each is cut to the limit, the question kept when one was found.
    """
    question, context, room = clean(question), clean(context), max(room, 0)
    if len(question) <= MAX_STRING and len(context) <= room:
        return question, context, None
    lead, asked = split_question(question) if len(question) > MAX_STRING else ("", question)
    rest = "\n\n".join(part for part in (lead if asked else question, context) if part)
    if asked and len(rest) <= room:
        return asked, rest, None
    if not above:
        return (asked, cut(rest, room), None) if asked else (cut(question), cut(context, room), None)
    locale = detect_locale(f"{question} {context}")
    question = asked or catalog.text("question_above", locale)
    return question, catalog.text("text_above", locale), code_block(rest)
