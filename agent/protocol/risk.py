"""Which options of a risk confirmation go ahead, decided from the request, never by position.

A *go-ahead* option needs a second, deliberate step on every platform (Slack's and Feishu's
confirm dialogs, Telegram's confirm keyboard, a typed confirmation in text) and is styled as
destructive; the *safe* choice (keep / cancel / no) and an approval's *Edit* (it only opens a
form) are neutral and answer at once. Pure: the renderers, the terminal and the core ask here.

- An approval (``source == "approval"``, agent/interrupts.py): Approve goes ahead, Reject is
  safe, Edit is neutral; anything else goes ahead.
- Any other risk confirmation (``ask_clarification``, a graph's ``interrupt()``): an option is
  safe when its label reads as keep / cancel / no (``reads_safe``, words in the catalog's
  ``RISK_WORDS``); every other option goes ahead. When none reads safe, all go ahead. A leading
  "yes" or "no" says nothing of the kind on its own: what follows it decides ("No, keep it" is
  safe, "No, drop it now" goes ahead), and every part of a label must read safe for it to be. A
  "don't" refuses whatever follows unless that keeps or stops ("Don't send it" is safe, "Don't
  keep it", "Don't wait" go ahead).
- A risk confirmation asked as a form (not an approval's Edit): a typed answer goes ahead when it
  ticks a checkbox (or, for a checkbox whose label reads safe, "Keep the backups", leaves it
  unticked) or picks a select's option that does not read safe (``form_goes_ahead``); a field
  whose value as shown would go ahead is shown with nothing picked, to be picked (``hides_default``).
- Any other question: no roles, nothing changes.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

from .catalog import AFFIRMATIVE_WORDS, NEGATIVE_WORDS, RISK_WORDS, every
from .coerce import fold
from .models import FormField, HumanInputRequest, HumanInputResponse, Locale, Option

Role = Literal["go_ahead", "safe", "neutral"]

#: ``source`` of an approval's request (``clarigate.agent.interrupts.APPROVAL``).
APPROVAL_SOURCE = "approval"

_LEADING = re.compile(r"^[\W_]+")
_EN = re.compile(r"[a-z]")


def _words(kind: str) -> list[str]:
    """The words of one kind in every language, longest first (so "不要" is tried before "不")."""
    found = {w for words in RISK_WORDS[kind].values() for w in words}
    return sorted(found, key=len, reverse=True)


def _key(label: str) -> str:
    text = unicodedata.normalize("NFKC", label).casefold().replace("’", "'")
    return _LEADING.sub("", " ".join(text.split()))


def _opening(text: str, kind: str, bounded: bool = False) -> str | None:
    """What follows a ``kind`` word that ``text`` starts with, or None.

    An English word must end at a word boundary ("no" is not the start of "now"); a Chinese one
    needs none (Chinese has no spaces), unless ``bounded``.
    """
    found = _opener(text, kind, bounded)
    return None if found is None else found[1]


def _opener(text: str, kind: str, bounded: bool = False) -> tuple[str, str] | None:
    """The ``kind`` word ``text`` starts with (the longest) and what follows it, or None."""
    for word in _words(kind):
        if not text.startswith(word):
            continue
        rest = text[len(word) :]
        if rest and (bounded or _EN.match(word[-1])) and re.match(r"[\w']", rest):
            continue
        return word, _LEADING.sub("", rest)
    return None


def _joined(kind: str) -> str:
    return "|".join(rf"\b{re.escape(w)}\b" if _EN.match(w[-1]) else re.escape(w) for w in _words(kind))


#: What splits a label into its parts: punctuation, a spaced dash, the catalog's ``joins`` words.
_PARTS = re.compile(r"[,，;；、:：.。!！?？…()（）\[\]【】—–~～]|\s-+\s|" + _joined("joins"))
_TRAILING_MARKS = re.compile(r"[\W_]+$")


def _parts(text: str) -> list[str]:
    parts = (_TRAILING_MARKS.sub("", _LEADING.sub("", part)) for part in _PARTS.split(text))
    return [part for part in parts if part]


def _polite(text: str) -> bool:
    """True when ``text`` is nothing but ``polite`` words ("thanks", "了吧"), or nothing at all."""
    while text:
        rest = _opening(text, "polite")
        if rest is None:
            return False
        text = rest
    return True


def reads_safe(label: str) -> bool:
    """True when an option's label reads as the safe choice: keep, cancel, no, don't, stop…

    Cautious by design: a label that could go either way ("Cancel the order", "Don't keep a
    backup", "Keep going", "No, drop it now") goes ahead, since a needless confirmation costs one
    tap and a missing one may cost the data. A label of several parts ("No, keep it", "不，直接删除")
    is safe only when its first part reads safe and every other one does too (or only thanks).
    """
    text = _key(label)
    after_yes = _opening(text, "yes")
    if after_yes is not None:  # "Yes, keep it": what follows the yes says it
        text = after_yes
    parts = _parts(text)
    if not parts:
        return False
    first, *more = parts
    return _part_safe(first) and all(_polite(part) or _part_safe(part) for part in more)


def _part_safe(text: str) -> bool:
    """``reads_safe`` for one part of a label (no punctuation or ``joins`` word in it)."""
    loose = _opening(text, "no")
    if loose is not None and _polite(loose):  # "No", "No thanks", "不用了", "算了吧"
        return True
    rest = _opening(text, "no", bounded=True)
    if rest is not None and _part_safe(rest):  # "Nope not now"; "No problem", "No backup needed" go ahead
        return True
    rest = _negated(text)
    if rest is not None:  # "Don't send it", "不同意"; "Don't keep it", "Don't cancel", "不保留数据" go ahead
        return _opening(rest, "act") is not None or (
            _opening(rest, "keep") is None and _opening(rest, "stop") is None
        )
    rest = _opening(text, "keep")
    if rest is not None:  # "Keep the data"; "Keep going", "keep on deleting" go ahead
        first = rest.split(" ", 1)[0]
        return not (first == "on" or (first.endswith("ing") and _EN.match(first)))
    rest = _opening(text, "stop")
    if rest is not None:  # alone or with a word that names nothing else: "Cancel", "Stop here"
        return not rest or rest in _words("alone")
    return False


def _negated(text: str) -> str | None:
    """What a ``dont`` word that ``text`` starts with negates, or None; None too when a longer
    ``no`` word opens it ("Never mind the backup" is no "never" but a "never mind" and then more)."""
    dont = _opener(text, "dont")
    no = _opener(text, "no")
    if dont is None or (no is not None and len(no[0]) > len(dont[0])):
        return None
    return dont[1]


def option_roles(request: HumanInputRequest) -> dict[str, Role]:
    """``{option id: role}`` for a risk confirmation's options; empty for any other question."""
    if request.clarification_type != "risk_confirmation" or not request.options:
        return {}
    if request.source == APPROVAL_SOURCE:
        return {option.id: _approval_role(option) for option in request.options}
    safe = {option.id for option in request.options if reads_safe(option.label)}
    return {option.id: "safe" if option.id in safe else "go_ahead" for option in request.options}


def _approval_role(option: Option) -> Role:
    label = fold(option.label)
    if label in {fold(w) for w in every("edit")}:
        return "neutral"
    if label in {fold(w) for key in ("reject", "cancel") for w in every(key)}:
        return "safe"
    return "go_ahead"


def goes_ahead(request: HumanInputRequest, option_id: str | None) -> bool:
    """True when picking ``option_id`` needs the second, deliberate step first."""
    return option_id is not None and option_roles(request).get(option_id) == "go_ahead"


def go_ahead_ids(request: HumanInputRequest) -> list[str]:
    """The go-ahead options' ids, in order."""
    return [option_id for option_id, role in option_roles(request).items() if role == "go_ahead"]


def is_risk_form(request: HumanInputRequest) -> bool:
    """True for a risk confirmation asked as a form (a typed interrupt's schema, ``ask_clarification``
    with fields), not an approval's Edit form (its Approve is the go-ahead, asked first already)."""
    return (
        request.clarification_type == "risk_confirmation"
        and request.input_mode == "form"
        and bool(request.fields)
        and request.source != APPROVAL_SOURCE
    )


def asks_first(request: HumanInputRequest) -> bool:
    """True when some answer to ``request`` needs the second step (a go-ahead option or a risk form)."""
    return bool(go_ahead_ids(request)) or is_risk_form(request)


def field_goes_ahead(form_field: FormField, value: object) -> bool:
    """True when a risk form's ``value`` for ``form_field`` goes ahead: a checkbox's yes (its no
    when its label reads safe), a select's (or multi-select's) option that does not read safe."""
    if form_field.type == "checkbox":
        return isinstance(value, bool) and value is not reads_safe(form_field.label)
    picked = value if isinstance(value, list) else [value]
    return any(o.value in picked and not reads_safe(o.label) for o in form_field.options)


def hides_default(request: HumanInputRequest, form_field: FormField) -> bool:
    """True for a risk form's field whose value as shown would go ahead (``field_goes_ahead``): its
    default, or a checkbox's unticked "no" when it has none ("Keep the backups"). Every platform
    shows it with nothing picked, required, naming what the agent proposed, and refuses a submit
    without the pick, so that Submit alone never takes a decision the person did not make."""
    if not is_risk_form(request):
        return False
    if form_field.default is None:
        return form_field.type == "checkbox" and field_goes_ahead(form_field, False)
    return field_goes_ahead(form_field, form_field.default)


def form_goes_ahead(request: HumanInputRequest, values: dict[str, object] | None) -> bool:
    """True when a risk form's answer ``values`` go ahead in one of its fields (``field_goes_ahead``)."""
    given = values or {}
    return is_risk_form(request) and any(
        field_goes_ahead(f, given[f.name]) for f in request.fields if f.name in given
    )


def answer_goes_ahead(request: HumanInputRequest, response: HumanInputResponse) -> bool:
    """True when ``response`` (a pick or a form's values) needs the second step before it counts."""
    if response.response_kind == "option":
        return goes_ahead(request, response.option_id)
    return response.response_kind == "form" and form_goes_ahead(request, response.values)


def is_confirm_word(text: str) -> bool:
    """True when a typed message is the confirming word ("confirm", "确认"), in any language."""
    word = fold(text).strip(" .!。！\"'“”「」")
    return word in {fold(w) for w in every("confirm")}


def is_affirmative(text: str) -> bool:
    """True when a typed message is a plain yes ("yes", "OK!", "是", "好的。"): one of the catalog's
    ``AFFIRMATIVE_WORDS`` and nothing else, trimmed, case- and width-insensitive, a trailing
    . ! 。！ allowed ("yes, delete it" is no plain yes). Not the confirming word (``is_confirm_word``)."""
    return _plain(text, AFFIRMATIVE_WORDS)


def is_negative(text: str) -> bool:
    """True when a typed message is a plain no ("no", "Nope!", "否", "不用了。"): one of the catalog's
    ``NEGATIVE_WORDS`` and nothing else, compared as ``is_affirmative`` compares ("no, delete the
    logs" is no plain no)."""
    return _plain(text, NEGATIVE_WORDS)


def _plain(text: str, catalog: dict[Locale, tuple[str, ...]]) -> bool:
    word = fold(text).rstrip(".!。 ")
    return bool(word) and word in {fold(w) for words in catalog.values() for w in words}


#: The catalog keys of an approval's options (``clarigate.agent.approvals``), and the marks a
#: typed pick may end with (as ``field_values.find_option`` sets them aside).
_APPROVAL_KEYS = ("approve", "reject", "edit", "approval_respond")
_TRAILING = ".!?,;:。、…~ "


def approval_option(request: HumanInputRequest, text: str) -> Option | None:
    """The approval's option whose label ``text`` is in another language ("批准" typed to an
    English approval, "Approve" to a Chinese one), so that it is that pick, asked to be confirmed
    as the option typed in the approval's language is (``gateway/flow/confirm.py``); None for any
    other text or question."""
    if request.source != APPROVAL_SOURCE:
        return None
    typed = fold(text).strip(_TRAILING)
    for key in _APPROVAL_KEYS:
        labels = {fold(w).strip(_TRAILING) for w in every(key)}
        if typed in labels:
            return next((o for o in request.options if fold(o.label).strip(_TRAILING) in labels), None)
    return None
