"""The options a graph's ``interrupt()`` value offers, checked for the graph's author.

A model's ``ask_clarification`` arguments are read leniently (options as JSON text, as lines of
text: ``clarigate.agent.protocol.normalize``); a graph's author wrote the value in code, so a
string where a list belongs (``"options": "ab"``) is a mistake, not one option "ab": it gives no
buttons, and neither does an item that is not an option (``None``, a dict without a label). The
question stays answerable as free text, and one warning line per interrupt names what was left out
(by key, position and type, never by content) so the author can fix the graph.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from clarigate.agent.bounded import BoundedDict
from clarigate.agent.protocol import normalize_request
from clarigate.agent.protocol.normalize import KEY_ALIASES

log = logging.getLogger(__name__)

# The interrupts already warned about: a question is shown and read again (its status, a restart,
# its answer) and each time its options are checked, but its author is told once.
_WARNED: BoundedDict[str, None] = BoundedDict(512)


def checked_options(interrupt_id: str, args: dict[str, Any]) -> dict[str, Any]:
    """``args`` (an interrupt's value, as a request's arguments) with options that are not a list
    taken out (``[]``: no buttons, the question asked as free text); items of a list that are no
    option are left out by the request itself. What is left out is logged once per interrupt."""
    key = "options" if args.get("options") is not None else KEY_ALIASES["options"]
    raw = args.get(key)
    if raw is None:
        return args
    if not isinstance(raw, list | tuple):
        _warn_once(interrupt_id, f"`{key}` is {_kind(raw)}, not a list: no buttons, asked as free text")
        return {**args, key: []}
    unread = [f"#{n} ({_kind(item)})" for n, item in enumerate(raw, start=1) if not _is_option(item)]
    if unread:
        outcome = "asked as free text" if len(unread) == len(raw) else "left out"
        _warn_once(
            interrupt_id,
            f"{len(unread)} of {len(raw)} `{key}` items are not options (a string, a number or a dict "
            f"with a label or value): {', '.join(unread)}; {outcome}",
        )
    return args


def _is_option(item: Any) -> bool:
    """True for an item the request reads as an option (a label it can show)."""
    return bool(normalize_request({"question": "?", "options": [item]}, "check").options)


def _kind(value: Any) -> str:
    """What a value is, without its content: ``a str``, ``None``, ``a dict with keys x, y``."""
    if value is None:
        return "None"
    if isinstance(value, Mapping):
        keys = ", ".join(str(k)[:40] for k in list(value)[:5])
        return f"a dict with keys {keys}" if keys else "an empty dict"
    return f"a {type(value).__name__}"


def _warn_once(interrupt_id: str, problem: str) -> None:
    if interrupt_id in _WARNED:
        return
    _WARNED[interrupt_id] = None
    log.warning("interrupt %s: %s", interrupt_id, problem)
