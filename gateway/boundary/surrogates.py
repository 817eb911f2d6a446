"""JSON from a platform, each lone UTF-16 surrogate in it made U+FFFD.

RFC 8259 lets a JSON string hold ``"\\ud800"``: the escape of half a UTF-16 pair. Python's ``json``
decodes it to a lone surrogate, a ``str`` that cannot be written as UTF-8: serialising the job,
a Redis key, a call to the platform would all fail on it, far from where it came in, and the
message would be lost to redeliveries answered 500. So where a platform's JSON is read
(``loads``, or ``clean`` on what a library parsed), each lone surrogate becomes U+FFFD, as a UTF-8
decoder does with a byte it cannot read: the message is taken, its other words as they were.

A raw UTF-8 body cannot hold a surrogate otherwise, so a body without such an escape is decoded
as is (one regex search over its bytes; ``clean`` walks the parsed value only when it may hold one).
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel

Model = TypeVar("Model", bound=BaseModel)

#: The JSON escape of a surrogate (``\\ud800``–``\\udfff``): the only way one gets into JSON text;
#: as it is, or under a form's percent-encoding (``%5Cud800``: Slack's ``payload=``).
_ESCAPE_BYTES = re.compile(rb"(?:\\|%5[cC])u[dD][89a-fA-F]")
_ESCAPE_TEXT = re.compile(r"(?:\\|%5[cC])u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def may_hold_surrogates(raw: bytes | str) -> bool:
    """Whether JSON text ``raw`` (or a form holding JSON) escapes a surrogate (half of a pair, or a
    lone one)."""
    found = _ESCAPE_BYTES.search(raw) if isinstance(raw, bytes) else _ESCAPE_TEXT.search(raw)
    return found is not None


def loads(raw: bytes | str) -> Any:
    """``json.loads`` with each lone surrogate made U+FFFD (a pair escaped as two halves stays the
    one character it is). Raises what ``json.loads`` raises (``ValueError``, ``RecursionError``)."""
    value = json.loads(raw)
    return clean(value) if may_hold_surrogates(raw) else value


def clean(value: Any) -> Any:
    """``value`` (parsed JSON: dicts, lists, strings, numbers) with each lone surrogate in its
    strings, keys included, made U+FFFD, two halves of a pair side by side the one character they
    are (``RecursionError``, as ``json.loads``, when nested too deep)."""
    if isinstance(value, str):
        return _whole(value) if _SURROGATE.search(value) else value
    if isinstance(value, dict):
        return {clean(key): clean(item) for key, item in value.items()}
    if isinstance(value, list):
        return [clean(item) for item in value]
    return value


def _whole(text: str) -> str:
    """``text`` with each pair of halves (as a model streams an emoji: one half a piece) made the
    character it is, and each lone half U+FFFD."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def clean_model(model: Model) -> Model:
    """``model`` with each lone surrogate in its strings made U+FFFD (``clean``): the model itself
    when it holds none. The agent's words may hold one (a model's JSON ``"\\ud83d"``, half an
    emoji), which no JSON record of them and no platform takes."""
    dumped = model.model_dump()
    cleaned = clean(dumped)
    return model if cleaned == dumped else type(model).model_validate(cleaned)
