"""The libraries' floor for one message, measured alone in the benchmark's run (``http_e2e.py``).

What a message costs in the protocol libraries serve is built on, with nothing of clarigate's
around them: bolt's ack of a signed request (the bare bolt app's process), the two Web API calls
of a reply through slack_sdk's ``AsyncWebClient`` (``chat.postMessage`` for "Working…", then
``chat.update`` with the answer) against the same fake Slack, and the store's Redis calls of one
message through redis-py against the same Redis (the calls serve makes for a first delivery, in
the same order). The last two run in this process, on the same event loop as serve's (uvloop),
so their CPU is ``time.process_time()`` here. ``report_floor`` and ``report_budget`` print the
floor beside the gateway's own CPU and what 1,000 messages at once would need.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp

#: At most this many calls at once by default, as serve has many messages in flight (the
#: benchmark measures the floor at its burst's number in flight too: ``in_flight``).
IN_FLIGHT = 16
#: Messages at once, for the CPU budget line.
BUDGET_BURST = 1000


@dataclass
class Floor:
    """CPU seconds per message of each library alone, and the Redis round trips it took."""

    ack: float
    web_api: float
    redis: float
    round_trips: float
    in_flight: int = IN_FLIGHT

    @property
    def total(self) -> float:
        return self.ack + self.web_api + self.redis


async def _bounded(n: int, one: Callable[[int], Awaitable[Any]], in_flight: int) -> None:
    slots = asyncio.Semaphore(in_flight)

    async def run(i: int) -> None:
        async with slots:
            await one(i)

    await asyncio.gather(*(run(i) for i in range(n)))


async def bolt_ack_cpu(
    url: str,
    cpu_of_bolt: Callable[[], float],
    n: int,
    send: Callable[[aiohttp.ClientSession, str, bytes], Awaitable[float]],
    body: Callable[[int], bytes],
    in_flight: int = IN_FLIGHT,
) -> float:
    """CPU seconds of the bare bolt app per signed event it acks (``n`` events, ``in_flight`` at once)."""
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=in_flight)) as http:
        before = cpu_of_bolt()
        await _bounded(n, lambda i: send(http, url, body(i)), in_flight)
        return (cpu_of_bolt() - before) / n


async def web_api_cpu(token: str, api_url: str, n: int, in_flight: int = IN_FLIGHT) -> float:
    """This process's CPU per pair of slack_sdk calls: "Working…" posted, then edited into a reply."""
    from slack_sdk.web.async_client import AsyncWebClient

    from clarigate.adapters.slack.settings import SlackSettings

    # as serve sets them: no DEBUG lines built per call (only Slack's: every platform's SDK
    # imported here would grow this process's heap, and its full collections pause the rounds)
    for name in SlackSettings.sdk_loggers:
        logging.getLogger(name).setLevel(logging.WARNING)
    # one keep-alive session for the client's life, as serve's Slack adapter has (slack_sdk would
    # otherwise open one per call)
    session = aiohttp.ClientSession()
    client = AsyncWebClient(token=token, base_url=api_url, session=session, retry_handlers=[])

    async def pair(i: int) -> None:
        posted = await client.chat_postMessage(channel=f"DF{i}", text="Working…")
        await client.chat_update(channel=f"DF{i}", ts=posted["ts"], text=f"floor reply {i}")

    try:
        await _bounded(in_flight, lambda i: pair(-1 - i), in_flight)  # first imports, the connections
        started = time.process_time()
        await _bounded(n, pair, in_flight)
        return (time.process_time() - started) / n
    finally:
        await session.close()


async def store_cpu(redis_url: str, prefix: str, n: int, in_flight: int = IN_FLIGHT) -> tuple[float, float]:
    """This process's CPU per message of the store's calls for one message's first delivery, and the
    round trips they took: accept (web process), then read, thread lookup, live message noted, reply
    recorded, completed (worker process)."""
    from clarigate.gateway.store.redis import RedisStore

    store = RedisStore(redis_url, prefix)
    payload = {"message": {"text": "floor", "padding": "x" * 600}}  # about a DM job's size

    async def accept(i: int) -> None:
        await store.accept_job(f"floor-{i}", "message", f"floor-{i}", f"slack:T:DF{i}", payload, 3600)

    async def work(job: Any) -> None:
        await store.thread_with_pending(job.order_key, 3600)
        await store.set_json(f"live:{job.inbound_id}", {"channel": "DF", "ts": "1.2"}, 3600)
        await store.record_delivery(job.inbound_id, '{"items": []}', 3600, (uuid.uuid4().hex, 1.0))
        await store.complete_job(job)

    try:
        await _bounded(in_flight, lambda i: accept(-1 - i), in_flight)  # the group, scripts, connections
        warm = await store.read_jobs("floor", count=in_flight, block_ms=0)
        await _bounded(len(warm), lambda i: work(warm[i]), in_flight)
        trips, started = store.round_trips, time.process_time()
        await _bounded(n, accept, in_flight)
        jobs = []
        while len(jobs) < n:
            jobs += await store.read_jobs("floor", count=in_flight, block_ms=0)
        await _bounded(len(jobs), lambda i: work(jobs[i]), in_flight)
        return (time.process_time() - started) / n, (store.round_trips - trips) / n
    finally:
        keys = [store.keys.jobs, store.keys.cleanup]
        for i in range(-in_flight, n):
            chat, inbound = f"slack:T:DF{i}", f"floor-{i}"
            keys += [store.keys.seen(inbound), store.keys.seq(chat), store.keys.next(chat)]
            keys += [store.keys.thread(chat), store.keys.done(inbound), store.keys.delivery(inbound)]
            keys.append(store.keys.state(f"live:{inbound}"))
        await store._redis.delete(*keys)
        await store.close()


def report_floor(floors: list[Floor], per_message: float, alone: float) -> None:
    """Each floor (its calls ``in_flight`` at once) beside the gateway's own CPU per message
    (serve's minus the agent alone's), and their ratio."""
    own = per_message - alone
    for floor in floors:
        print(
            f"  the libraries' floor, {floor.in_flight} calls at once: {floor.total * 1000:.2f} ms per"
            f" message (bolt's ack {floor.ack * 1000:.2f}, two Web API calls through slack_sdk"
            f" {floor.web_api * 1000:.2f}, the store's Redis calls {floor.redis * 1000:.2f} in"
            f" {floor.round_trips:.2f} round trips; each alone, this run)"
        )
    print(
        "  the gateway's own / the floor: "
        + ", ".join(
            f"{own * 1000:.2f} / {f.total * 1000:.2f} ms = {own / f.total:.2f} ({f.in_flight} at once)"
            for f in floors
        )
        + " (target <= 1.5)"
    )


def report_budget(per_message: float, alone: float, shortest_model_seconds: float) -> None:
    """What 1,000 at once would need: every message's CPU inside its slack (0.5x its model time),
    the shortest model time's slack being the tightest."""
    slack = 0.5 * shortest_model_seconds
    cores = BUDGET_BURST * per_message / slack
    print(
        f"  CPU budget: {per_message:.4f} CPU-seconds per message ({alone:.4f} the agent's);"
        f" {BUDGET_BURST:,} at once within 1.5x a {shortest_model_seconds:.0f} s model time"
        f" need {BUDGET_BURST * per_message:.1f} CPU-s in {slack:.1f} s: ~{cores:.0f} cores for the replica"
        f" (its web and worker processes; Redis not included)"
    )
