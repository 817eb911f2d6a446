"""A TCP proxy to the test Redis that loses the reply to one chosen command, as a network blip would."""

from __future__ import annotations

import asyncio
import contextlib


class ReplyDroppingProxy:
    """Forwards everything; once armed, cuts the link right after Redis answered the next request
    containing the armed bytes (a key, a script's SHA, a command name): Redis ran it, the client
    never hears back, and its connection is gone."""

    def __init__(self, upstream_port: int = 6379) -> None:
        self.upstream_port = upstream_port
        self.armed: bytes = b""
        self.dropped = 0
        self.port = 0
        self._server: asyncio.Server | None = None
        self._links: set[asyncio.Task[None]] = set()

    @property
    def url(self) -> str:
        """A redis:// URL through the proxy (database 0)."""
        return f"redis://127.0.0.1:{self.port}/0"

    def arm(self, marker: str | bytes) -> None:
        """Lose the reply to the next request containing ``marker``."""
        self.armed = marker.encode() if isinstance(marker, str) else marker

    async def start(self) -> None:
        """Listen on a free port of 127.0.0.1."""
        self._server = await asyncio.start_server(self._link, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        """Stop listening and cut the links still open."""
        if self._server is not None:
            self._server.close()
        for task in list(self._links):
            task.cancel()
        await asyncio.gather(*self._links, return_exceptions=True)

    async def _link(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        server_r, server_w = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        last_request = [b""]

        async def upstream() -> None:
            while data := await client_r.read(65536):
                last_request[0] = data
                server_w.write(data)
                await server_w.drain()

        async def downstream() -> None:
            while data := await server_r.read(65536):
                ran = self.armed and self.armed in last_request[0] and not data.startswith(b"-NOSCRIPT")
                if ran:
                    self.armed = b""
                    self.dropped += 1
                    return  # Redis ran it; the client never hears back
                client_w.write(data)
                await client_w.drain()

        tasks = [asyncio.create_task(upstream()), asyncio.create_task(downstream())]
        self._links.update(tasks)
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
                self._links.discard(task)
        for writer in (client_w, server_w):
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
