"""The options of a question or a select field, from whatever a model sent (``normalize``).

Options are told apart by what the model wrote, in full: two options that differ only past the
string limit (``MAX_STRING``) stay two, and their cut labels and values are made to differ
(``distinct_cuts``: the beginning, an ellipsis, then the words from where they start to differ).
What is merged (an option repeating an earlier one's label or value), left out (past
``MAX_OPTIONS``) or cut is named in ``omitted``, for the model.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .coerce import cut, fold, maybe_json, one_line, scalar_text
from .graphemes import boundary_before, is_boundary
from .models import MAX_OPTIONS, MAX_STRING, Option

_ELLIPSIS = "…"
#: How far back from where texts start to differ the shown part may begin (to a word's start).
_WORD_BACK = 15


def as_items(value: Any) -> list[Any]:
    """A list of entries from a list, JSON text, newline-separated text or a single entry."""
    value = maybe_json(value)
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, str):
        return [line for line in value.splitlines() if line.strip()]
    if isinstance(value, Mapping):
        return [value]
    return []


def line(value: Any) -> str:
    """One line of text, uncut ("" when there is none)."""
    text = scalar_text(value)
    return one_line(text) if text else ""


def count(items: list[Any], noun: str) -> str:
    return f"{len(items)} {noun}{'' if len(items) == 1 else 's'}"


def names(labels: list[str], most: int = MAX_OPTIONS) -> str:
    """``"a", "b", … and 3 more``: what was left out, short enough for a tool result."""
    shown = ", ".join(json.dumps(cut(label, 60), ensure_ascii=False) for label in labels[:most])
    return shown + (f" and {len(labels) - most} more" if len(labels) > most else "")


def note_cut(text: str, what: str, omitted: list[str] | None) -> str:
    """``text`` cut to the string limit; a cut is named in ``omitted`` (what, and how long)."""
    if len(text) > MAX_STRING and omitted is not None:
        omitted.append(f"{what} is {len(text)} characters long: the person saw only its first {MAX_STRING}")
    return cut(text)


def given_value(item: Any, value: str) -> Any:
    """What an option given as ``item`` stands for: its ``value`` as written (a bool, a number, a
    dict…) or, for an option given as text (or without a value), its ``value`` as text."""
    if isinstance(item, Mapping):
        return item["value"] if item.get("value") is not None else value
    return value if isinstance(item, str) else item


def option_parts(item: Any) -> tuple[str, str]:
    """(label, value), uncut, of one option given as a string, number or ``{label, value}`` dict."""
    if isinstance(item, Mapping):
        label = next(
            (t for key in ("label", "text", "title", "name", "value") if (t := line(item.get(key)))), ""
        )
        return label, line(item.get("value")) or label
    label = line(item)
    return label, label


def options_from(
    raw: Any,
    id_prefix: str,
    omitted: list[str] | None = None,
    where: str = "",
    given: dict[str, Any] | None = None,
) -> list[Option]:
    """Distinct options (case- and width-insensitive, on the full text), at most MAX_OPTIONS, ids
    ``{prefix}-N``; those merged, past the limit or cut are named in ``omitted`` (as options of
    ``where``), and each kept one's value as ``raw`` gave it goes into ``given`` (``given_value``)."""
    kept: list[tuple[Any, str, str]] = []
    seen: set[str] = set()
    pairs: set[tuple[str, str]] = set()
    past: list[str] = []
    merged: list[str] = []
    for item in as_items(raw):
        label, value = option_parts(item)
        if not label:
            continue
        if fold(label) in seen or fold(value) in seen:
            if (fold(label), fold(value)) not in pairs:  # an exact repeat loses nothing
                merged.append(label)
            continue
        # Values are matched like labels, so one option's value may not shadow another's label.
        seen.update((fold(label), fold(value)))
        pairs.add((fold(label), fold(value)))
        if len(kept) == MAX_OPTIONS:
            past.append(label)
        else:
            kept.append((item, label, value))
    labels = distinct_cuts([label for _, label, _ in kept])
    values = distinct_cuts([value for _, _, value in kept])
    options = [
        Option(id=f"{id_prefix}-{n}", label=labels[n - 1], value=values[n - 1])
        for n in range(1, len(kept) + 1)
    ]
    if given is not None:
        given.update(
            {o.id: given_value(item, value) for o, (item, _, value) in zip(options, kept, strict=True)}
        )
    if omitted is not None:
        _report(omitted, where, merged, past, [label for _, label, _ in kept if len(label) > MAX_STRING])
    return options


def _report(omitted: list[str], where: str, merged: list[str], past: list[str], long: list[str]) -> None:
    if merged:
        omitted.append(
            f"{count(merged, 'option')} of {where} repeating an earlier option's label or value, "
            f"merged into it (only one of them can be picked): {names(merged)}"
        )
    if past:
        omitted.append(f"{count(past, 'option')} of {where} past the first {MAX_OPTIONS}: {names(past)}")
    if long:
        omitted.append(
            f"{count(long, 'option label')} of {where} longer than {MAX_STRING} characters, "
            f"shown shortened: {names(long)}"
        )


def distinct_cuts(texts: list[str], limit: int = MAX_STRING) -> list[str]:
    """Each text in at most ``limit`` characters, no two alike (``fold``) when the texts are not:
    one that fits is kept, one cut whose beginning tells it apart is cut there, else its beginning,
    an ellipsis and the part from where it starts to differ from the others."""
    out: list[str] = []
    taken = {fold(text) for text in texts if len(text) <= limit}
    plain = [fold(cut(text, limit)) for text in texts]
    for index, text in enumerate(texts):
        if len(text) <= limit:
            out.append(text)
            continue
        shown = cut(text, limit)
        if fold(shown) in taken or plain.count(fold(shown)) > 1:
            others = [other for i, other in enumerate(texts) if i != index]
            shown = head_and_tail(text, max((_common(text, o) for o in others), default=0), limit)
        number = 2
        while fold(shown) in taken:  # still alike: numbered, as a last resort
            suffix = f" ({number})"
            shown, number = cut(text, limit - len(suffix)) + suffix, number + 1
        taken.add(fold(shown))
        out.append(shown)
    return out


def head_and_tail(text: str, differs: int, limit: int) -> str:
    """``text``'s beginning, an ellipsis, and the words from character ``differs`` on, in at most
    ``limit`` characters."""
    head = text[: boundary_before(text, limit // 3, floor=0)].rstrip()
    room = limit - len(head) - len(_ELLIPSIS)
    word = text.rfind(" ", 0, differs) + 1  # from the start of the word it differs in, if near
    start = word if differs - word <= _WORD_BACK else differs
    start = max(min(start, len(text) - room), len(head))  # as much as fits up to the end
    after = text.find(" ", start)
    if text[start - 1 : start] not in ("", " ") and 0 <= after < start + _WORD_BACK:
        start = after + 1  # from a word's start
    while start < len(text) and not is_boundary(text, start):  # never inside a character as shown
        start += 1
    return head + _ELLIPSIS + cut(text[start:].lstrip(), room)


def _common(a: str, b: str) -> int:
    """How many characters ``a`` and ``b`` share at their start."""
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n
