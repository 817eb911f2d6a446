"""A configuration that pydantic refuses, said in one line: each setting's path and what is wrong.

pydantic's own text spans several lines per error, with the refused value and a link to its
documentation; ``serve`` ends a failed start with one line naming the setting, and the value
(which could be part of a credential) is left out.
"""

from __future__ import annotations

from pydantic import ValidationError


def describe_invalid(exc: ValueError) -> str:
    """``path.to.setting: what is wrong`` for each error, joined by ``; `` (any other
    ``ValueError``: its own text)."""
    if not isinstance(exc, ValidationError):
        return str(exc)
    problems = []
    for error in exc.errors(include_url=False, include_input=False):
        where = ".".join(str(part) for part in error["loc"])
        cause = (error.get("ctx") or {}).get("error")
        # a validator's ValueError: its own words (pydantic puts "Value error, " before them)
        what = str(cause) if error["type"] == "value_error" and cause is not None else error["msg"]
        problems.append(f"{where}: {what}" if where else what)
    return "; ".join(problems)
