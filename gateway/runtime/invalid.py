"""A configuration that pydantic refuses, said in one line: each setting's path, the environment
variable it came from when it came from one, and what is wrong.

pydantic's own text spans several lines per error, with the refused value and a link to its
documentation; ``serve`` ends a failed start with one line naming the setting, and the value
(which could be part of a credential) is left out. An operator who set ``CLARIGATE_BOT_ID`` or
``FEISHU_MODE`` reads that name, not only the YAML key it stands for.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic_settings import SettingsError


def describe_invalid(
    exc: ValueError,
    within: Sequence[str] = (),
    well_known: Mapping[str, tuple[str | None, str]] | None = None,
    model: type[BaseModel] | None = None,
) -> str:
    """``path.to.setting (VARIABLE): what is wrong`` for each error, joined by ``; `` (any other
    ``ValueError``: its own text).

    ``within``: the path of the model refused in the whole configuration (a platform's section:
    ``("slack",)``; nothing: the bot's own ``GatewayConfig``), to find the variable that set a
    value; ``well_known``: the contract names that set settings (``FEISHU_MODE`` -> (``feishu``,
    ``mode``)), read before ``CLARIGATE_…`` names (by default the bot's, ``ENV_NAMES``);
    ``model``: the one refused, for a value the environment could not decode (``describe_undecoded``).
    """
    if isinstance(exc, SettingsError):
        return describe_undecoded(exc, "CLARIGATE_" + "".join(f"{part}__" for part in within).upper(), model)
    if not isinstance(exc, ValidationError):
        return str(exc)
    if well_known is None:
        from clarigate.gateway.runtime.config import ENV_NAMES  # config imports this module

        well_known = ENV_NAMES
    problems = []
    for error in exc.errors(include_url=False, include_input=False):
        loc = [str(part) for part in error["loc"]]
        where = ".".join(loc)
        variable = set_by([*within, *loc], well_known) if loc else None
        if variable is not None:
            where = f"{where} ({variable})"
        problems.append(f"{where}: {_what(error)}" if where else _what(error))
    return "; ".join(problems)


def describe_undecoded(
    exc: SettingsError, prefix: str = "CLARIGATE_", model: type[BaseModel] | None = None
) -> str:
    """``agent.tools (CLARIGATE_AGENT__TOOLS): is read as a JSON list and …`` for a value
    pydantic-settings refused to decode before any validation (a ``CLARIGATE_<SECTION>__<FIELD>``
    holding a list, a mapping or a section, which it reads as JSON); its own text names only the
    top-level field ("error parsing value for field "agent" from source "EnvSettingsSource"").
    ``prefix`` and ``model``: where the variables start and what they set (by default the bot's
    ``GatewayConfig``; ``CLARIGATE_SLACK__`` and a platform's settings for its section)."""
    if model is None:
        from clarigate.gateway.runtime.config import GatewayConfig  # config imports this module

        model = GatewayConfig

    cause, field = exc.__cause__, re.search(r'field "([^"]+)"', str(exc))
    if not isinstance(cause, json.JSONDecodeError) or field is None:
        return str(exc)
    top = f"{prefix}{field[1]}".upper()
    for name, value in sorted(os.environ.items()):
        if value == cause.doc and (name.upper() == top or name.upper().startswith(f"{top}__")):
            path = name.upper().removeprefix(prefix).lower().split("__")
            return f"{'.'.join(path)} ({name}): {_not_json(cause, _expected(model, path))}"
    return str(exc)


def _expected(model: type[BaseModel], path: Sequence[str]) -> str | None:
    """What the setting at ``path`` of ``model`` is read as from the environment: "a JSON list",
    "a JSON object", or None when the path names no such setting."""
    annotation: Any = model
    for key in path:
        info = getattr(annotation, "model_fields", {}).get(key)
        if info is None:
            return None
        annotation = info.annotation
    for each in (annotation, *get_args(annotation)):
        origin = get_origin(each) or each
        if origin in (list, tuple, set, frozenset):
            return "a JSON list"
        if origin is dict or (isinstance(origin, type) and issubclass(origin, BaseModel)):
            return "a JSON object"
    return None


def _not_json(cause: json.JSONDecodeError, kind: str | None = None) -> str:
    """``is read as a JSON list and is not valid JSON (… at character 3)``: ``kind`` what the
    setting takes, else guessed from the text's first character."""
    kind = kind or {"[": "a JSON list", "{": "a JSON object"}.get(cause.doc.strip()[:1], "JSON")
    return f"is read as {kind} and is not valid JSON ({cause.msg} at character {cause.pos})"


def set_by(path: Sequence[str], well_known: Mapping[str, tuple[str | None, str]]) -> str | None:
    """The environment variable that set the setting at ``path`` (or a list or section holding it),
    in the loader's order: a contract name, then ``CLARIGATE_<PATH>`` (nested with ``__``, or the
    whole section as JSON); None when none of them is set (the YAML file, a default)."""
    environ = {name.upper(): name for name, value in os.environ.items() if value}
    for end in range(len(path), 0, -1):
        for name, (section, field) in well_known.items():
            if [*([section] if section else []), field] == list(path[:end]) and name.upper() in environ:
                return environ[name.upper()]
    for end in range(len(path), 0, -1):
        name = "CLARIGATE_" + "__".join(path[:end]).upper()
        if name in environ:
            return environ[name]
    return None


def _what(error: Any) -> str:
    """What is wrong, in words: a validator's own (pydantic puts "Value error, " before them), a
    pattern of allowed characters spelled out, JSON that does not parse located; else pydantic's."""
    cause = (error.get("ctx") or {}).get("error")
    if isinstance(cause, json.JSONDecodeError):
        return _not_json(cause)
    if error["type"] == "value_error" and cause is not None:
        return str(cause)
    if error["type"] == "bool_parsing":  # pydantic's "unable to interpret input" named no word it takes
        return "not a yes/no value: write true or false (yes/no, on/off, 1/0 work too), nothing around it"
    pattern = (error.get("ctx") or {}).get("pattern")
    if error["type"] == "string_pattern_mismatch" and (words := _pattern_in_words(str(pattern))):
        return words
    return str(error["msg"])


def _pattern_in_words(pattern: str) -> str | None:
    """``^[A-Za-z0-9][A-Za-z0-9._-]*$`` as "use only letters, digits, '.', '_' and '-', starting
    with a letter or digit"; None for a pattern of another shape."""
    match = re.fullmatch(r"\^\[([^\]]+)\]\[([^\]]+)\]\*\$", pattern)
    if match is None:
        return None
    kinds, others = _characters(match[2])
    listed = [f"{kind}s" for kind in kinds] + others
    allowed = ", ".join(listed[:-1]) + f" and {listed[-1]}" if len(listed) > 1 else listed[0]
    first = " or ".join(sum(_characters(match[1]), []))
    return f"use only {allowed}, starting with a {first}"


def _characters(group: str) -> tuple[list[str], list[str]]:
    """A character class's members in words: the kinds (``letter``, ``digit``) and each other
    character, quoted."""
    kinds = []
    for ranges, kind in ((("A-Z", "a-z"), "letter"), (("0-9",), "digit")):
        if all(part in group for part in ranges):
            kinds.append(kind)
            for part in ranges:
                group = group.replace(part, "")
    return kinds, [f"'{character}'" for character in group.replace("\\", "")]
