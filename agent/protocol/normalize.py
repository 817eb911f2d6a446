"""Turn the model's (often sloppy) ``ask_clarification`` arguments into a valid request.

Models send options as JSON text, booleans as "true", the same option twice, field
types nobody defined; graphs name the question ``prompt`` and the options ``choices``
(``KEY_ALIASES``). None of that may crash a run: every oddity is repaired or dropped, and a
request that is still too big degrades form → options → free text. What the
limits leave out is never dropped silently: ``normalize_with_omissions`` names it, for the tool
result the model reads.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping
from typing import Any, get_args

from .catalog import ui_text
from .coerce import clean, fold, maybe_json, parse_bool, scalar_text
from .field_values import BLANK, type_field_value
from .models import (
    MAX_DEFAULT_CHARS,
    MAX_FIELDS,
    MAX_SERIALIZED_BYTES,
    RESERVED_FIELD_NAMES,
    ClarificationType,
    FieldType,
    FormField,
    HumanInputRequest,
    Locale,
    Option,
)
from .option_list import as_items as _as_items
from .option_list import count as _count
from .option_list import line, note_cut
from .option_list import names as _names
from .option_list import options_from as _options

_CLARIFICATION_TYPES: tuple[str, ...] = get_args(ClarificationType)
_FIELD_TYPES: tuple[str, ...] = get_args(FieldType)
_CHOICE_TYPES = ("select", "multi_select")
# Names models reach for that mean one of our field types.
_FIELD_TYPE_ALIASES = {
    "string": "text",
    "str": "text",
    "input": "text",
    "long_text": "textarea",
    "multiline": "textarea",
    "paragraph": "textarea",
    "int": "number",
    "integer": "number",
    "float": "number",
    "decimal": "number",
    "bool": "checkbox",
    "boolean": "checkbox",
    "toggle": "checkbox",
    "dropdown": "select",
    "radio": "select",
    "choice": "select",
    "enum": "select",
    "multiselect": "multi_select",
    "multi_choice": "multi_select",
    "checkboxes": "multi_select",
    "datetime": "date",
}
#: Names a graph's ``interrupt()`` (or a model) may give the request's keys: ``{"prompt": …,
#: "choices": […]}``. Each is read only when the protocol's own key is missing (or None).
KEY_ALIASES = {"question": "prompt", "options": "choices"}
# Field names become platform action ids and form keys: keep them short and plain.
_MAX_NAME = 48
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
_IDEOGRAPHS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f"
_CJK_IDEOGRAPH = re.compile(f"[{_IDEOGRAPHS}]")
# Kana (the middle dot and long-vowel mark left out: Chinese text borrows them) and Hangul.
_KANA_OR_HANGUL = re.compile(
    "[\u3040-\u30fa\u30fd-\u30ff\u31f0-\u31ff\uff66-\uff9f\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]"
)
# A run of letters of any other script (``api``, ``staging``, ``Привет``).
_OTHER_WORD = re.compile(f"[^\\W\\d_{_IDEOGRAPHS}]+")
# What is pasted rather than said: a link, an address, a mention, a flag, a path or identifier.
_PASTED = re.compile(r"\S*(?:://|@|[/\\_=#.:]\S|\d)\S*|(?<!\S)-\S+")
# Words of Chinese grammar, common in any sentence and rare in a person's name: one of them makes a
# text Chinese however much English (a pasted error, a command) it holds.
_GRAMMAR = frozenset(
    "的了是我你您他她它们这那个吗呢吧啊把被在没不要用帮请给看下就都也还再怎么什啥哪为到去说让做改写查修跑好选错里"
)


def detect_locale(text: str) -> Locale:
    """``zh`` when the text has a word of Chinese grammar (``的``, ``这``, ``用``: ``_GRAMMAR``) or
    more CJK ideographs than words in other letters (links, flags and identifiers not counted),
    else ``en``.

    Chinese with English terms, a link or a pasted error in it (``帮我部署 api-server 到
    staging``, ``这个 bug 怎么修 TypeError: …``) is ``zh``; English
    naming a person (``Please book a room for 王伟 tomorrow``) is ``en``. Japanese and Korean
    (any kana or Hangul) are ``en``: there is no catalog of theirs, and English serves better
    than Chinese."""
    if not isinstance(text, str) or _KANA_OR_HANGUL.search(text):
        return "en"
    ideographs = _CJK_IDEOGRAPH.findall(text)
    if not ideographs:
        return "en"
    if _GRAMMAR.intersection(ideographs):
        return "zh"
    return "zh" if len(ideographs) > len(_OTHER_WORD.findall(_PASTED.sub(" ", text))) else "en"


def normalize_request(
    args: Mapping[str, Any], tool_call_id: str, locale: Locale | None = None
) -> HumanInputRequest:
    """A valid request from raw tool arguments; never raises. ``locale``: the person's language,
    taken when the question's words are not Chinese (a graph's text fixed in English)."""
    return normalize_with_omissions(args, tool_call_id, locale=locale)[0]


def normalize_with_omissions(
    args: Mapping[str, Any],
    tool_call_id: str,
    given: dict[str, Any] | None = None,
    locale: Locale | None = None,
) -> tuple[HumanInputRequest, list[str]]:
    """``normalize_request``, and what the protocol's limits left out of the request (16 fields,
    24 options, 16 KB serialized, 200 characters a text; options merged as repeats), one phrase
    each (``2 fields: `a`, `b` (past 16 KB)``), for the model: nothing it asked for goes unshown
    without it being told. Never raises. ``given``, when passed, gets each option's value as
    ``args`` wrote it, by option id (``given_value``)."""
    call_id = str(tool_call_id)
    omitted: list[str] = []
    try:
        return _normalize(_as_arguments(args), call_id, omitted, given, locale), omitted
    except Exception:  # a model's junk must never end a run with a traceback
        request = HumanInputRequest(
            request_id=f"clarification:{call_id}",
            tool_call_id=call_id,
            question=ui_text("default_question"),
        )
        return request, []


def _normalize(
    args: Mapping[str, Any],
    call_id: str,
    omitted: list[str],
    given: dict[str, Any] | None = None,
    person: Locale | None = None,
) -> HumanInputRequest:
    question = _paragraph(read_key(args, "question"), "the question", omitted)
    context = _paragraph(args.get("context"), "the question's context", omitted)
    locale = detect_locale(f"{question} {context}")
    locale = person if person is not None and locale != "zh" else locale
    clarification_type = _clarification_type(args.get("clarification_type", args.get("type")))
    options = _options(read_key(args, "options"), "option", omitted, "the question", given)
    fields = _fields(args.get("fields"), omitted, given)
    if clarification_type == "risk_confirmation" and not fields and len(options) < 2:
        # A confirmation always needs a way to say no: Cancel, which reads as the safe choice
        # (agent/protocol/risk.py); the option given goes ahead.
        go_ahead = options[0].label if options else ui_text("confirm", locale)
        options = _options([go_ahead, ui_text("cancel", locale)], "option")
    base = HumanInputRequest(
        request_id=f"clarification:{call_id}",
        tool_call_id=call_id,
        clarification_type=clarification_type,
        question=question or ui_text("default_question", locale),
        context=context or None,
        locale=locale,
    )
    return _fit(base, options, fields, omitted)


def read_key(args: Mapping[str, Any], key: str) -> Any:
    """``args[key]``, or what its alias holds when it is missing (``KEY_ALIASES``)."""
    value = args.get(key)
    return args.get(KEY_ALIASES[key]) if value is None and key in KEY_ALIASES else value


def aliases_read(args: Mapping[str, Any]) -> set[str]:
    """The alias keys of ``args`` read as the protocol's own (``read_key``): they hold nothing else."""
    return {alias for key, alias in KEY_ALIASES.items() if args.get(key) is None and alias in args}


def _as_arguments(args: Any) -> Mapping[str, Any]:
    """The arguments as a mapping: JSON text is decoded, a bare string is the question."""
    args = maybe_json(args)
    if isinstance(args, Mapping):
        return args
    if isinstance(args, str):
        return {"question": args}
    return {}


def _paragraph(value: Any, what: str = "", omitted: list[str] | None = None) -> str:
    """Question or context text: newlines kept, cut to the string limit (a cut named in
    ``omitted``, as ``what``)."""
    text = scalar_text(value)
    return note_cut(clean(text), what, omitted) if text else ""


def _label(value: Any, what: str = "", omitted: list[str] | None = None) -> str:
    """A one-line label, cut to the string limit ("" when there is none; a cut named in
    ``omitted``, as ``what``)."""
    return note_cut(line(value), what, omitted)


def _clarification_type(value: Any) -> ClarificationType:
    text = scalar_text(value)
    key = fold(text).replace("-", "_").replace(" ", "_") if text else ""
    return key if key in _CLARIFICATION_TYPES else "missing_info"  # type: ignore[return-value]


def _fields(raw: Any, omitted: list[str], given: dict[str, Any] | None = None) -> list[FormField]:
    """Valid, uniquely named fields, at most MAX_FIELDS (those past it named in ``omitted``)."""
    raw = maybe_json(raw)
    if isinstance(raw, Mapping) and not ({"name", "label", "type"} & set(raw)):
        # {"project_name": {...}, "deadline": "Deadline"}: a mapping from name to spec.
        raw = [
            {**spec, "name": spec.get("name", key)}
            if isinstance(spec, Mapping)
            else {"name": key, "label": spec}
            for key, spec in raw.items()
        ]
    fields: list[FormField] = []
    taken: set[str] = set()
    past: list[str] = []
    for index, item in enumerate(_as_items(raw), start=1):
        spec = item if isinstance(item, Mapping) else {"name": item}
        own: dict[str, Any] = {}  # its options' values, kept only with the field
        field = _field(spec, index, omitted if len(fields) < MAX_FIELDS else None, own)
        if field is None or fold(field.name) in taken:
            continue
        if given is not None:
            given.update(own)
        taken.add(fold(field.name))
        if len(fields) == MAX_FIELDS:
            past.append(field.name)
            continue
        fields.append(field)
    if past:
        omitted.append(f"{_count(past, 'field')} past the first {MAX_FIELDS}: {_names(past)}")
    return fields


def _field(
    spec: Mapping[str, Any], index: int, omitted: list[str] | None = None, given: dict[str, Any] | None = None
) -> FormField | None:
    """One field from a sloppy spec, or ``None`` when it has neither name nor label."""
    given_name = scalar_text(spec.get("name")) or scalar_text(spec.get("id")) or scalar_text(spec.get("key"))
    full_label = line(spec.get("label")) or line(spec.get("title"))
    if not given_name and not full_label:
        return None
    name = _field_name(given_name or "") or _field_name(full_label).lower() or f"field_{index}"
    label = _label(full_label, f"the label of field `{name}`", omitted)
    field_type = _field_type(spec.get("type"))
    options: list[Option] = []
    if field_type in _CHOICE_TYPES:
        options = _options(
            spec.get("options", spec.get("choices")), f"{name}-option", omitted, f"field `{name}`", given
        )
        if not options:
            field_type = "text"  # a select with nothing to select is a text box
    field = FormField(
        name=name,
        label=label or _humanize(_label(given_name)) or _humanize(name),
        type=field_type,  # type: ignore[arg-type]
        required=bool(parse_bool(spec.get("required"))),
        placeholder=_label(spec.get("placeholder"), f"the placeholder of field `{name}`", omitted) or None,
        options=options,
    )
    raw_default = next((spec[k] for k in _DEFAULT_KEYS if spec.get(k) is not None), None)
    default = _default(field, raw_default, omitted)
    return field.model_copy(update={"default": default}) if default is not None else field


# Where models put a field's current value.
_DEFAULT_KEYS = ("default", "default_value", "initial_value", "value")


def _default(field: FormField, raw: Any, omitted: list[str] | None = None) -> Any:
    """The field's default typed like its answer (``"true"`` → True, ``"5"`` → 5, a label → the
    option's value); ``None`` when there is none or it does not fit the field. A multi-select's
    entries that fit none of its options are left out of it (named in ``omitted``)."""
    if raw is None:
        return None
    if field.type == "multi_select":
        raw = maybe_json(raw)
        if isinstance(raw, (list, tuple)):
            fits = [_fits(field, [item]) for item in raw]
            unfit = [str(item) for item, ok in zip(raw, fits, strict=True) if not ok]
            if unfit and omitted is not None:
                omitted.append(
                    f"{_count(unfit, 'value')} of the default of field `{field.name}` matching "
                    f"none of its options, left out: {_names(unfit)}"
                )
            raw = [item for item, ok in zip(raw, fits, strict=True) if ok]
    value, error = type_field_value(field, raw, "en")
    if error is not None or value is BLANK:
        return None
    if isinstance(value, str) and len(value) > MAX_DEFAULT_CHARS:
        return None  # more than a platform's input can show: a blank field keeps the value instead
    if isinstance(value, list):  # in the options' order, as every platform gives choices back
        value = [o.value for o in field.options if o.value in value]
    return value


def _fits(field: FormField, raw: Any) -> bool:
    value, error = type_field_value(field, raw, "en")
    return error is None and value is not BLANK


def _field_name(text: str) -> str:
    """A plain ASCII identifier (letters, digits, ``_``, ``-``) made from ``text``; one a
    JavaScript client cannot use (``constructor``) gets a ``_`` after it, which no other has."""
    plain = _NAME_UNSAFE.sub("_", unicodedata.normalize("NFKC", text)).strip("_-")
    name = plain[:_MAX_NAME].rstrip("_-")
    return f"{name}_" if name in RESERVED_FIELD_NAMES else name


def _humanize(name: str) -> str:
    words = name.replace("_", " ").replace("-", " ").strip()
    return words[:1].upper() + words[1:]


def _field_type(value: Any) -> str:
    text = scalar_text(value)
    key = fold(text).replace("-", "_").replace(" ", "_") if text else "text"
    key = _FIELD_TYPE_ALIASES.get(key, key)
    return key if key in _FIELD_TYPES else "text"


def _serialized_size(request: HumanInputRequest) -> int:
    # ASCII-escaped JSON is the largest common encoding, so a request that fits here fits anywhere.
    return len(json.dumps(request.to_artifact()))


def _fit(
    base: HumanInputRequest, options: list[Option], fields: list[FormField], omitted: list[str]
) -> HumanInputRequest:
    """The request with its input mode, degraded (form → options → free text) until it fits;
    what had to go is named in ``omitted``."""
    request = _fitted(base, list(options), list(fields))
    limit = f"to keep the question under {MAX_SERIALIZED_BYTES // 1024} KB"
    kept = {f.name for f in request.fields}
    gone_fields = [f.name for f in fields if f.name not in kept]
    if gone_fields:
        omitted.append(f"{_count(gone_fields, 'field')}, {limit}: {_names(gone_fields)}")
    if options and request.input_mode == "form":
        omitted.append(f"the question's {_count(options, 'option')} (a form shows its fields, not options)")
    elif options:
        gone = [o.label for o in options[len(request.options) :]]
        if gone:
            omitted.append(f"the last {_count(gone, 'option')} of the question, {limit}: {_names(gone)}")
    if request.input_mode == "free_text" and (fields or options):
        omitted.append("so the question is asked as free text, with no form and no options")
    return request


def _fitted(base: HumanInputRequest, options: list[Option], fields: list[FormField]) -> HumanInputRequest:
    """The request degraded (form → options → free text) until it fits (the lists are consumed)."""
    while True:
        if fields:
            request = base.model_copy(update={"input_mode": "form", "fields": fields, "options": []})
        elif options:
            request = base.model_copy(
                update={"input_mode": "choice_with_other", "fields": [], "options": options}
            )
        else:
            return base.model_copy(update={"input_mode": "free_text", "fields": [], "options": []})
        if _serialized_size(request) <= MAX_SERIALIZED_BYTES:
            return request
        if fields:
            # Drop the least important field first: the last optional one, else the last.
            optional = [i for i, f in enumerate(fields) if not f.required]
            del fields[optional[-1] if optional else -1]
        else:
            options.pop()
