"""The fake Slack Web API of the tests in a process of its own, for ``bench/http_e2e.py``.

In the benchmark's own process its work (two Web API calls per message, from the worker) would
share an event loop with the load generator and delay the timing of the acks being measured, for
clarigate (whose runs call it) and not for the bare bolt app. Here it notes when each reply
("Done: <text>") arrived, in ``time.monotonic()`` (the same clock in every process of the machine):

    python bench/fake_slack_app.py      # prints the API URL on the first line, serves until SIGTERM

``GET /_bench/replied`` answers ``{text: when}``, ``GET /_bench/calls`` the calls by method,
``POST /_bench/reset`` forgets both.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.adapters.slack.fake_slack import FakeSlack  # noqa: E402


@dataclass
class TimedSlack(FakeSlack):
    """The fake Web API, noting when each reply ("Done: <text>") arrived, as a post or an edit."""

    replied: dict[str, float] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    def _answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        text = str(params.get("text") or "")
        if method in ("chat.postMessage", "chat.update") and text.startswith("Done: "):
            self.replied.setdefault(text.removeprefix("Done: "), time.monotonic())
        self.counts[method] = self.counts.get(method, 0) + 1
        self.calls.clear()  # counted instead: a long benchmark would keep every call's payload
        return super()._answer(method, params)

    async def start(self) -> None:
        """FakeSlack's routes and the benchmark's, on a random free port of 127.0.0.1."""
        app = web.Application()
        app.router.add_post("/api/{method}", self._handle)
        app.router.add_get("/_bench/replied", self._replied)
        app.router.add_get("/_bench/calls", self._calls)
        app.router.add_post("/_bench/reset", self._reset)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def _replied(self, request: web.Request) -> web.Response:
        return web.json_response(self.replied)

    async def _calls(self, request: web.Request) -> web.Response:
        return web.json_response(self.counts)

    async def _reset(self, request: web.Request) -> web.Response:
        self.replied.clear()
        self.counts.clear()
        return web.json_response({})


async def main() -> None:
    fake = TimedSlack()
    await fake.start()
    print(fake.api_url, flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await fake.stop()


if __name__ == "__main__":
    try:
        import uvloop

        uvloop.run(main())
    except ImportError:  # pragma: no cover - installed with clarigate
        asyncio.run(main())
