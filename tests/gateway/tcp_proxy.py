"""A TCP proxy to a local service that can be cut and brought back, as a database outage would
be; it also counts the Redis commands that pass through it (RESP arrays from the client)."""

from __future__ import annotations

import asyncio
import contextlib


class OutageProxy:
    """Forwards 127.0.0.1:<port> to 127.0.0.1:<upstream_port>. ``cut()`` closes the listening
    socket and every open link (clients see their connections lost, new ones refused);
    ``hang()`` keeps accepting and reading but forwards nothing either way, on open links and new
    ones (a server that hangs); ``restore()`` listens again on the same port (after ``hang()``,
    the links that swallowed bytes are cut first)."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.port = 0
        self.links = 0  # connections accepted so far
        self.commands = 0  # complete RESP commands sent by clients so far (for a Redis upstream)
        self.hung = False
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        """Listen (on a free port the first time, on the same port after a ``cut``)."""
        self._server = await asyncio.start_server(self._link, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def cut(self) -> None:
        """Refuse new connections and lose the open ones."""
        if self._server is not None:
            self._server.close()
            self._server = None
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def hang(self) -> None:
        """Accept connections, but answer nothing on them (nor on the open ones)."""
        self.hung = True

    async def restore(self) -> None:
        """Accept connections again (and forward on them)."""
        if self.hung:
            self.hung = False
            await self.cut()
        await self.start()

    async def _link(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        self.links += 1
        server_r, server_w = await asyncio.open_connection("127.0.0.1", self.upstream_port)

        requests = bytearray()

        async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, count: bool) -> None:
            while data := await reader.read(65536):
                if self.hung:
                    continue  # swallowed: the server never sees it, the client never hears back
                if count:
                    requests.extend(data)
                    self.commands += take_commands(requests)
                writer.write(data)
                await writer.drain()

        tasks = [
            asyncio.create_task(pipe(client_r, server_w, True)),
            asyncio.create_task(pipe(server_r, client_w, False)),
        ]
        self._tasks.update(tasks)
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
                self._tasks.discard(task)
            for writer in (client_w, server_w):
                writer.close()
                with contextlib.suppress(Exception):
                    await writer.wait_closed()


def take_commands(buffer: bytearray) -> int:
    """Remove the complete RESP commands (``*<n>`` arrays of ``$<len>`` bulk strings) at the start
    of ``buffer``; how many there were (an incomplete one stays for the next read)."""
    taken = 0
    while True:
        end = _command_end(bytes(buffer))
        if end is None:
            return taken
        del buffer[:end]
        taken += 1


def _command_end(data: bytes) -> int | None:
    line = data.find(b"\r\n")
    if not data.startswith(b"*") or line < 0:
        return None
    at = line + 2
    for _ in range(int(data[1:line])):
        head = data.find(b"\r\n", at)
        if head < 0:
            return None
        at = head + 2 + int(data[at + 1 : head]) + 2
        if at > len(data):
            return None
    return at
