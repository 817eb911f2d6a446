"""MCP servers' sessions: one per server, open from the agent's start until it closes.

The session is the server's state: a stdio server is started once, not for every tool call,
and keeps what it holds between calls, for every conversation of the process (each process of
``clarigate serve`` has its own); one found gone is started again. A server whose start fails, or
whose session ends before it answered anything (it crashes on every call, or exits once started),
is down: calls to its tools fail at once (tenacity's exponential wait: ``RETRY_FIRST_SECONDS``,
doubling after each such start, up to ``RETRY_MAX_SECONDS``; a session that answers resets it),
logged when it goes down and when it is back. The tools are langchain-mcp-adapters'
``load_mcp_tools`` on that session, listed as it starts (a list the server changes later is a
warning in the log: ``mcp_tool_list``). A stdio server's stderr goes to the log (a line each: ``MCP
server 'files': …``), never to the terminal ``clarigate chat`` talks in.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

import anyio

import clarigate.agent.mcp as mcp_errors
from clarigate.agent.mcp import MCPServer, MCPServerError, name_problems, servers_of, unavailable_if_down
from clarigate.agent.mcp_backoff import Backoff
from clarigate.agent.mcp_backoff import root_cause as _root_cause
from clarigate.agent.mcp_tool_list import ToolListWatch

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool
    from mcp import ClientSession

log = logging.getLogger(__name__)
T = TypeVar("T")

#: How long a closing server gets to stop (stdio: the SDK closes its input, then terminates it).
CLOSE_SECONDS = 10.0
#: The longest stderr line logged (the rest is cut).
MAX_LINE = 2000
#: How long calls fail at once after a server's start failed: doubling from the first, up to the max.
RETRY_FIRST_SECONDS = 5.0
RETRY_MAX_SECONDS = 300.0


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
    has ended is started again before the next call; a start that fails, or is not answered within
    its wait, or whose session ends before it answered anything, fails the call that finds it, and
    the server is down: until it is tried again (``_Backoff``) every call fails at once, and no
    process is started. A call the closed connection refused, or an HTTP server refused for a
    session it no longer knows (404: restarted, or expired it), is sent to a new session; one in
    flight as it ends fails (``ToolServerUnavailable`` each: not in flight if the server refused
    it with a 4xx status). A call given up is cancelled on the server."""

    def __init__(self, server: MCPServer) -> None:
        self.server = server
        self._held: _Held | None = None
        self._wait_seconds = 30.0
        self._restarting = asyncio.Lock()
        self._backoff = Backoff(server.name, RETRY_FIRST_SECONDS, RETRY_MAX_SECONDS)
        self._tool_list = ToolListWatch(server.name, self.list_tools)

    async def start(self, wait_seconds: float) -> list[BaseTool]:
        """Open the session and load its tools within ``wait_seconds``."""
        from langchain_mcp_adapters.tools import load_mcp_tools

        from clarigate.agent.tool_parts import untyped_blobs_as_text

        name, self._wait_seconds = self.server.name, wait_seconds
        try:
            async with asyncio.timeout(wait_seconds):
                self._held = _Held(self.server, wait_seconds, self._tool_list.on_message)
                await self._held.opened()
                tools = load_mcp_tools(
                    self,  # type: ignore[arg-type]
                    server_name=name,
                    tool_name_prefix=self.server.prefix,
                    tool_interceptors=[untyped_blobs_as_text],
                )
                loaded = await tools
        except TimeoutError:
            raise MCPServerError(name, f"did not answer within {wait_seconds:.0f} s") from None
        except Exception as exc:  # the SDK wraps start-up failures in task groups: name the root cause
            raise MCPServerError(name, f"did not start or answer: {_root_cause(exc, name)}") from exc
        cut = len(name) + 1 if self.server.prefix else 0  # ``{server}_{tool}``: the server's own name
        self._tool_list.offered(tool.name[cut:] for tool in loaded)
        return loaded

    async def _live(self, gone: _Held | None = None) -> tuple[_Held, ClientSession]:
        """The held session and its client; started again first when it has ended (the server
        went away) or is ``gone`` (a call found its connection closed), unless the server is down
        and not yet due (``ConnectionError`` at once). One start at a time: a call meanwhile
        waits for it."""
        async with self._restarting:
            held, fresh = self._held, False
            if held is None:
                raise RuntimeError(f"MCP server {self.server.name!r}: its session is closed")
            if held is gone or held.ended:
                if held.on_trial:  # started, it ended before it answered: its start failed after all
                    held.on_trial = False
                    await held.aclose()
                    raise self._backoff.failed(ConnectionError("its session ended before it answered"))
                self._backoff.refuse_until_due()
                if not self._backoff.down:
                    log.warning("MCP server %r had stopped: starting it again", self.server.name)
                await held.aclose()
                held = self._held = _Held(self.server, self._wait_seconds, self._tool_list.on_message)
                fresh = True
            try:
                session = await held.opened()
            except ConnectionError as exc:
                held.on_trial = False
                raise self._backoff.failed(exc) from exc
            if fresh:  # a server started again may list other tools (once this call has the lock)
                self._tool_list.soon()
            return held, session

    async def _answer(self, held: _Held, request: Coroutine[Any, Any, T], sent: _Sent | None = None) -> T:
        """``held.watch(request)``; the session answered: its trial is over, the server is up."""
        answer = await held.watch(request, sent)
        held.on_trial = False
        self._backoff.started()
        return answer

    async def list_tools(self, cursor: str | None = None) -> Any:
        held, session = await self._live()
        return await self._answer(held, session.list_tools(cursor=cursor))

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None, **options: Any) -> Any:
        from mcp.shared.exceptions import McpError

        with unavailable_if_down(self.server.name):  # down or closed: ToolServerUnavailable
            held, session = await self._live()
            try:
                sent = _Sent()
                return await self._answer(held, _call_tool(session, name, arguments, options, sent), sent)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, McpError) as exc:
                # the server was gone before the call reached it, or it no longer knows the
                # session (404: restarted, or expired it): the call did not run. A new session takes it
                if isinstance(exc, McpError) and not mcp_errors.session_terminated(exc):
                    raise
                held, session = await self._live(gone=held)
                sent = _Sent()
                return await self._answer(held, _call_tool(session, name, arguments, options, sent), sent)

    async def aclose(self) -> None:
        await self._tool_list.aclose()
        held, self._held = self._held, None
        if held is not None:
            await held.aclose()


class _Sent:
    """The JSON-RPC id a call was sent with, once sent (``_call_tool`` takes it as it sends;
    read before, while calls run together, it would be another call's)."""

    id: int | None = None


def _next_id(session: ClientSession) -> int | None:
    """The id the session's next request takes (``send_request`` takes it before its first await);
    the SDK (mcp 1.30) has no public way to learn a request's id or to cancel one it sent."""
    request_id = getattr(session, "_request_id", None)
    return request_id if isinstance(request_id, int) else None


async def _call_tool(
    session: ClientSession,
    name: str,
    arguments: dict[str, Any] | None,
    options: dict[str, Any],
    sent: _Sent | None = None,
) -> Any:
    """``session.call_tool``, its id kept in ``sent``; cancelled, it tells the server to cancel the
    call too (MCP's ``notifications/cancelled``: the SDK's client does not send it,
    modelcontextprotocol/python-sdk#2507)."""
    from mcp import types

    request_id = _next_id(session)  # taken here, with no await before the SDK takes it
    if sent is not None:
        sent.id = request_id
    try:
        return await session.call_tool(name, arguments, **options)
    except asyncio.CancelledError:
        if isinstance(request_id, int):
            params = types.CancelledNotificationParams(requestId=request_id, reason="the run was stopped")
            notice = types.ClientNotification(types.CancelledNotification(params=params))
            try:
                with anyio.CancelScope(shield=True), anyio.move_on_after(CLOSE_SECONDS):
                    await session.send_notification(notice)
            except Exception as exc:  # the connection is gone: so is the call
                log.debug("MCP: the cancellation of call %s was not sent: %s", request_id, _root_cause(exc))
        raise


class _Held:
    """A session held open by a task of its own (entered and left in one task, as the SDK's
    task groups need) until ``aclose``; ``opened`` gives it once initialized. A server that does
    not answer ``initialize`` within ``wait_seconds`` is stopped (its process ended)."""

    def __init__(
        self,
        server: MCPServer,
        wait_seconds: float,
        on_message: Callable[[Any], Awaitable[None]] | None = None,
    ) -> None:
        self.server = server
        self._on_message = on_message  # the session's ``message_handler``: the server's notifications
        self.ready: asyncio.Future[ClientSession] = asyncio.get_running_loop().create_future()
        self.on_trial = True  # until it answers a request: ended before, it is a start that failed
        self.error: Exception | None = None  # what ended the session, if an error did
        self._wait_seconds = wait_seconds
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(self._hold(), name=f"MCP server {server.name}")

    @property
    def ended(self) -> bool:
        """True once the session is over: closed, or its connection ended."""
        return self._task.done()

    async def opened(self) -> ClientSession:
        """The initialized session; ``ConnectionError`` naming the server if it did not start
        (waiting for it is never what cancels its start)."""
        try:
            return await asyncio.shield(self.ready)
        except Exception as exc:
            why = _root_cause(exc, self.server.name)
            raise ConnectionError(f"MCP server {self.server.name!r} did not start: {why}") from exc

    async def watch(self, request: Coroutine[Any, Any, T], sent: _Sent | None = None) -> T:
        """The answer to ``request``; ``ToolServerUnavailable`` if the session ends before it comes
        (an HTTP server gone mid-call would otherwise leave the call waiting for ever): in flight,
        unless the server refused the request (``sent``: the JSON-RPC id it was sent with)."""
        call = asyncio.ensure_future(request)
        try:
            await asyncio.wait({call, self._task}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not call.done():
                call.cancel()
        if call.done() and not call.cancelled():
            return call.result()
        name, error, request_id = self.server.name, self.error, sent.id if sent else None
        if error and request_id is not None and mcp_errors.refused_request_id(error) == request_id:
            why = _root_cause(error, name)  # a 4xx status (401: its key revoked): not run
            raise mcp_errors.ToolServerUnavailable(name, f"MCP server {name!r} refused the call: {why}")
        ended = f"MCP server {name!r}: the connection ended before it answered"
        raise mcp_errors.ToolServerUnavailable(name, ended, in_flight=True)  # it may have run

    async def _hold(self) -> None:
        ready = self.ready
        try:
            async with _session(self.server, self._wait_seconds, self._on_message) as session:
                ready.set_result(session)
                await self._stop.wait()
        except Exception as exc:
            self.error = exc
            if not ready.done():
                _fail(ready, exc)
            else:
                name = self.server.name
                log.warning("MCP server %r: its session ended: %s", name, _root_cause(exc, name))
        finally:
            if not ready.done():
                _fail(ready, ConnectionError("its session was closed before it started"))

    async def aclose(self) -> None:
        self._stop.set()
        _, pending = await asyncio.wait({self._task}, timeout=CLOSE_SECONDS)
        if pending:
            self._task.cancel()
            await asyncio.wait({self._task}, timeout=CLOSE_SECONDS)


def _fail(ready: asyncio.Future[Any], exc: BaseException) -> None:
    """Fail a start; marked seen, as nobody may be waiting for it any more."""
    ready.set_exception(exc)
    ready.exception()


@asynccontextmanager
async def _session(
    server: MCPServer, wait_seconds: float, on_message: Callable[[Any], Awaitable[None]] | None = None
) -> AsyncIterator[ClientSession]:
    """A session on ``server`` initialized within ``wait_seconds`` (``TimeoutError`` if not,
    the server stopped), ``on_message`` its message handler (unless the settings give one); a
    stdio server's stderr goes to the log."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    conn = dict(server.connection)
    if on_message is not None:
        conn["session_kwargs"] = {"message_handler": on_message, **(conn.get("session_kwargs") or {})}
    if conn.pop("transport") != "stdio":
        from langchain_mcp_adapters.sessions import create_session

        async with create_session({**conn, "transport": server.connection["transport"]}) as session:  # type: ignore[arg-type]
            await _initialize(session, wait_seconds)
            yield session
        return
    session_kwargs = conn.pop("session_kwargs", None) or {}
    with _stderr_to_log(server.name) as errlog:
        params = StdioServerParameters(**conn)
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, **session_kwargs) as session,
        ):
            await _initialize(session, wait_seconds)
            yield session


async def _initialize(session: ClientSession, wait_seconds: float) -> None:
    try:
        with anyio.fail_after(wait_seconds):
            await session.initialize()
    except TimeoutError:
        raise TimeoutError(f"it did not answer within {wait_seconds:.0f} s") from None


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
