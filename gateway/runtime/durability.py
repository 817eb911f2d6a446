"""Redis' persistence, read once at start: whether a Redis restart can lose the marks of replies
already sent (``serve`` says so in one line, deploy/README.md, "Redis settings delivery needs").
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from clarigate.gateway.runtime.preflight import first_line

log = logging.getLogger("clarigate.gateway.runtime.serve")

#: What each ``appendfsync`` leaves when Redis itself crashes (a clean restart loses nothing).
_FSYNC_LEAVES = {
    "always": None,
    "everysec": "a Redis crash can lose the last second of delivery marks",
    "no": "a Redis crash can lose the last ~30 s of delivery marks (the OS flushes when it likes)",
}
DELIVERY_DOC = 'deploy/README.md, "Redis settings delivery needs"'


async def check_durability(link: Any, where: str) -> None:
    """One line on Redis' persistence (``CONFIG GET appendonly appendfsync``): a WARNING when a
    restart can lose the marks of replies already sent (no AOF, or ``appendfsync no``), an INFO
    line for ``everysec``; one INFO line when ``CONFIG`` is not allowed (an ACL, managed Redis)."""
    from redis import exceptions as errors

    try:
        raw = await asyncio.wait_for(link.config_get("append*"), 5)
    except (errors.ResponseError, errors.NoPermissionError) as exc:
        log.info(
            "%s: its persistence settings cannot be read (%s): run it with appendonly yes and "
            "appendfsync everysec or always (%s)",
            where,
            first_line(exc),
            DELIVERY_DOC,
        )
        return
    settings = dict(zip(raw[::2], raw[1::2], strict=False)) if isinstance(raw, list) else dict(raw)
    value = lambda name: str(settings.get(name) or "")  # noqa: E731
    if value("appendonly") != "yes":
        log.warning(
            "%s keeps no append-only file (appendonly %s): a Redis restart loses the marks of "
            "replies already sent, and they are sent again (shown twice where the platform cannot "
            "tell: Telegram); set appendonly yes and appendfsync everysec or always (%s)",
            where,
            value("appendonly") or "unknown",
            DELIVERY_DOC,
        )
        return
    leaves = _FSYNC_LEAVES.get(value("appendfsync"), _FSYNC_LEAVES["no"])
    if leaves is not None:
        level = logging.INFO if value("appendfsync") == "everysec" else logging.WARNING
        log.log(
            level,
            "%s: appendfsync %s: %s (replies then looked for on Slack, absorbed by Feishu, shown "
            "twice on Telegram); appendfsync always loses none (%s)",
            where,
            value("appendfsync"),
            leaves,
            DELIVERY_DOC,
        )
