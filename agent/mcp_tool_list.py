"""An MCP server's tools as listed at the agent's start, and a warning when the server changes them.

The agent offers the model the tools each server listed as it started: they are bound to its
graph, for the life of the process. A server may change its list afterwards (restarted with
another version, or telling its clients ``notifications/tools/list_changed``): its tools are
listed again then, when a session to it is opened again (``mcp_sessions``) and when it sends that
notification, and a list other than the one offered is a warning in the log naming the tools new
and gone: clarigate must be restarted to offer them as they are. Until then the model is offered
the old list; a call to a tool the server no longer has is answered by the server (an error the
model reads, as any tool's error), a new one is not offered.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

log = logging.getLogger(__name__)

#: The most pages of ``tools/list`` read again (a faulty server may give its cursor forever).
MAX_PAGES = 100


class ToolListWatch:
    """The tool names ``server`` offered at start; ``soon`` lists them again (``list_tools``, MCP's
    ``tools/list``, given a cursor) and warns once for each list that differs from them."""

    def __init__(self, server: str, list_tools: Callable[[str | None], Awaitable[Any]]) -> None:
        self.server = server
        self._list_tools = list_tools
        self._offered: frozenset[str] | None = None
        self._last: frozenset[str] | None = None  # the list last seen (warned about if not offered)
        self._tasks: set[asyncio.Task[None]] = set()

    def offered(self, names: Iterable[str]) -> None:
        """The server's own names of the tools the agent offers (as listed at start)."""
        self._offered = self._last = frozenset(names)

    def soon(self) -> None:
        """List the server's tools again, in a task of its own (a session's message handler may
        not wait for an answer: its session reads the answer after the handler returns)."""
        if self._offered is None:
            return
        task = asyncio.get_running_loop().create_task(self._check(), name=f"MCP server {self.server} tools")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def on_message(self, message: Any) -> None:
        """A ``ClientSession`` ``message_handler``: ``tools/list_changed`` has the list read again."""
        from mcp import types

        root = getattr(message, "root", None)
        if isinstance(message, types.ServerNotification) and isinstance(
            root, types.ToolListChangedNotification
        ):
            self.soon()

    async def _check(self) -> None:
        try:
            names = await self._names()
        except Exception as exc:  # down, or closed again: the next session opened lists them
            log.debug("MCP server %r: its tools could not be listed again: %s", self.server, exc)
            return
        if names == self._last or self._offered is None:
            return
        self._last = names
        if names == self._offered:
            log.info("MCP server %r lists the tools clarigate offers again", self.server)
            return
        new, gone = sorted(names - self._offered), sorted(self._offered - names)
        log.warning(
            "MCP server %r changed its tools (new: %s; gone: %s): the model is offered its tools as they "
            "were when clarigate started; restart clarigate to offer them as they are now",
            self.server,
            ", ".join(new) or "none",
            ", ".join(gone) or "none",
        )

    async def _names(self) -> frozenset[str]:
        """Every page of the server's list (at most ``MAX_PAGES``: a cursor given again, or pages
        without end, stop it there)."""
        names: set[str] = set()
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(MAX_PAGES):
            page = await self._list_tools(cursor)
            names.update(tool.name for tool in page.tools)
            cursor = page.nextCursor
            if not cursor or cursor in seen:
                break
            seen.add(cursor)
        return frozenset(names)

    async def aclose(self) -> None:
        """Stop the listings under way."""
        tasks, self._tasks = set(self._tasks), set()
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)
