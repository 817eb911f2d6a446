"""MCP servers' sessions: one per server, open from the agent's start until it closes.

The session is the server's state: a stdio server is started once, not for every tool call,
and keeps what it holds between calls, for every conversation of the process (each process of
``clarigate serve`` has its own); one found gone is started again. The tools are
langchain-mcp-adapters' ``load_mcp_tools`` on that session. A stdio server's stderr goes to the
log (this module's logger, a line each: ``MCP server 'files': …``), never to the terminal
``clarigate chat`` talks in.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import AsyncIterator, Coroutine, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

import anyio

from clarigate.agent.mcp import MCPServer, MCPServerError, name_problems, servers_of

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool
    from mcp import ClientSession

log = logging.getLogger(__name__)
T = TypeVar("T")

#: How long a closing server gets to stop (stdio: the SDK closes its input, then terminates it).
CLOSE_SECONDS = 10.0
#: The longest stderr line logged (the rest is cut).
MAX_LINE = 2000


class MCPSessions:
    """The servers' tools, each calling its server's open session; ``aclose`` ends them."""

    def __init__(self) -> None:
        self.tools: list[BaseTool] = []
        self._open: list[_Session] = []

    @classmethod
    async def open(
        cls,
        servers: Mapping[str, Mapping[str, Any]],
        wait_seconds: float = 30.0,
        taken: Mapping[str, str] | None = None,
    ) -> MCPSessions:
        """Start every server and list its tools; ``MCPServerError`` naming the first that fails,
        or a tool name two servers share, or one ``taken`` (name -> whose) or clarigate's own."""
        sessions = cls()
        try:
            found: dict[str, list[BaseTool]] = {}
            for server in servers_of(servers):
                session = _Session(server)
                sessions._open.append(session)
                found[server.name] = await session.start(wait_seconds)
            problems = name_problems({name: [t.name for t in tools] for name, tools in found.items()}, taken)
            if problems:
                raise problems[0]
        except BaseException:
            await sessions.aclose()
            raise
        sessions.tools = [tool for tools in found.values() for tool in tools]
        return sessions

    async def aclose(self) -> None:
        """End every session (stdio servers stop); idempotent."""
        opened, self._open = self._open, []
        for session in reversed(opened):
            await session.aclose()


async def server_tool_names(
    servers: Mapping[str, Mapping[str, Any]], wait_seconds: float = 30.0
) -> dict[str, list[str] | MCPServerError]:
    """``{server: [tool names] or the MCPServerError}`` for every server (``clarigate doctor``)."""
    found: dict[str, list[str] | MCPServerError] = {}
    for name, raw in servers.items():
        try:
            sessions = await MCPSessions.open({name: raw}, wait_seconds)
        except MCPServerError as exc:
            found[name] = exc
            continue
        found[name] = [tool.name for tool in sessions.tools]
        await sessions.aclose()
    return found


class _Session:
    """One server's session, as the tools see it (``list_tools``, ``call_tool``). A session that
    has ended is started again before the next call; a call the closed connection refused (it
    never reached the server) is sent to the new one; a call in flight when the connection
    ends fails with that error."""

    def __init__(self, server: MCPServer) -> None:
        self.server = server
        self._held: _Held | None = None
        self._wait_seconds = 30.0
        self._restarting = asyncio.Lock()

    async def start(self, wait_seconds: float) -> list[BaseTool]:
        """Open the session and load its tools within ``wait_seconds``."""
        from langchain_mcp_adapters.tools import load_mcp_tools

        name, self._wait_seconds = self.server.name, wait_seconds
        try:
            async with asyncio.timeout(wait_seconds):
                await self._open()
                tools = load_mcp_tools(self, server_name=name, tool_name_prefix=self.server.prefix)  # type: ignore[arg-type]
                return await tools
        except TimeoutError:
            raise MCPServerError(name, f"did not answer within {wait_seconds:.0f} s") from None
        except Exception as exc:  # the SDK wraps start-up failures in task groups: name the root cause
            raise MCPServerError(name, f"did not start or answer: {_root_cause(exc)}") from exc

    async def _open(self) -> None:
        self._held = _Held(self.server)
        await self._held.ready

    async def _live(self) -> _Held:
        """The held session; started again first when it has ended (the server went away)."""
        held = self._held
        if held is None:
            raise RuntimeError(f"MCP server {self.server.name!r}: its session is closed")
        return await self._restart(held) if held.ended else held

    async def list_tools(self, cursor: str | None = None) -> Any:
        held = await self._live()
        return await held.watch(held.session.list_tools(cursor=cursor))

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None, **options: Any) -> Any:
        held = await self._live()
        try:
            return await held.watch(held.session.call_tool(name, arguments, **options))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            # the server was gone before the call reached it: start it again and send it there
            held = await self._restart(held)
            return await held.watch(held.session.call_tool(name, arguments, **options))

    async def _restart(self, gone: _Held) -> _Held:
        async with self._restarting:
            if self._held is not gone and self._held is not None:
                return self._held  # another call started it again meanwhile
            if self._held is None:
                raise RuntimeError(f"MCP server {self.server.name!r}: its session is closed")
            log.warning("MCP server %r had stopped: starting it again", self.server.name)
            await gone.aclose()
            async with asyncio.timeout(self._wait_seconds):
                await self._open()
            return self._held

    async def aclose(self) -> None:
        held, self._held = self._held, None
        if held is not None:
            await held.aclose()


class _Held:
    """A session held open by a task of its own (entered and left in one task, as the SDK's
    task groups need) until ``aclose``; ``ready`` gives it once initialized."""

    def __init__(self, server: MCPServer) -> None:
        self.server = server
        self.ready: asyncio.Future[ClientSession] = asyncio.get_running_loop().create_future()
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(self._hold(), name=f"MCP server {server.name}")

    @property
    def ended(self) -> bool:
        """True once the session is over: closed, or its connection ended."""
        return self._task.done()

    @property
    def session(self) -> ClientSession:
        return self.ready.result()

    async def watch(self, request: Coroutine[Any, Any, T]) -> T:
        """The answer to ``request``; ``ConnectionError`` if the session ends before it comes (an
        HTTP server gone mid-call would otherwise leave the call waiting for ever)."""
        call = asyncio.ensure_future(request)
        try:
            await asyncio.wait({call, self._task}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not call.done():
                call.cancel()
        if call.done() and not call.cancelled():
            return call.result()
        raise ConnectionError(f"MCP server {self.server.name!r}: the connection ended before it answered")

    async def _hold(self) -> None:
        ready = self.ready
        try:
            async with _session(self.server) as session:
                if ready.done():  # the start was given up meanwhile
                    return
                ready.set_result(session)
                await self._stop.wait()
        except Exception as exc:
            if not ready.done():
                ready.set_exception(exc)
            else:
                log.warning("MCP server %r: its session ended: %s", self.server.name, _root_cause(exc))
        finally:
            if not ready.done():
                ready.cancel()

    async def aclose(self) -> None:
        self._stop.set()
        _, pending = await asyncio.wait({self._task}, timeout=CLOSE_SECONDS)
        if pending:
            self._task.cancel()
            await asyncio.wait({self._task}, timeout=CLOSE_SECONDS)


@asynccontextmanager
async def _session(server: MCPServer) -> AsyncIterator[ClientSession]:
    """An initialized session on ``server``; a stdio server's stderr goes to the log."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    conn = dict(server.connection)
    if conn.pop("transport") != "stdio":
        from langchain_mcp_adapters.sessions import create_session

        async with create_session(server.connection) as session:  # type: ignore[arg-type]
            await session.initialize()
            yield session
        return
    session_kwargs = conn.pop("session_kwargs", None) or {}
    with _stderr_to_log(server.name) as errlog:
        params = StdioServerParameters(**conn)
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, **session_kwargs) as session,
        ):
            await session.initialize()
            yield session


@contextmanager
def _stderr_to_log(name: str) -> Iterator[TextIO]:
    """A file to give a server as its stderr, whose lines a thread logs until the server exits."""
    read_fd, write_fd = os.pipe()
    reader = threading.Thread(target=_log_lines, args=(name, read_fd), name=f"MCP {name} stderr", daemon=True)
    reader.start()
    errlog = os.fdopen(write_fd, "w", encoding="utf-8")
    try:
        yield errlog
    finally:
        errlog.close()  # the server's own copy closes as it exits: the reader then reads the end
        reader.join(timeout=CLOSE_SECONDS)


def _log_lines(name: str, read_fd: int) -> None:
    with os.fdopen(read_fd, encoding="utf-8", errors="replace") as stream:
        for line in stream:
            if text := line.rstrip():
                log.info("MCP server %r: %s", name, text[:MAX_LINE])


def _root_cause(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if exc.__cause__ is not None and not str(exc):
        exc = exc.__cause__
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
