"""What one message costs in Redis: the store calls of a message's first delivery, counted on the
wire (round trips, through the counting proxy) and on the server (every command, those the
scripts run included, from ``INFO commandstats`` of a Redis of the test's own), so neither count
can grow back unnoticed.
"""

from __future__ import annotations

from pathlib import Path

from redis.asyncio import Redis

from clarigate.gateway.flow.recalls import due_and_recalled
from clarigate.gateway.store.redis import RedisStore

from ..tcp_proxy import OutageProxy
from .test_store_connection import free_port, listening, plain, redis_server

MESSAGES = 20

#: Per message: accept (1 script: dedupe, seq, job appended), the worker's read (one per batch),
#: its run's claim with its recall and approval-answer keys (1 script: ``recalls.due_and_recalled``),
#: its thread lookup with the language the person wrote in (1 script), the live message's
#: reference (1 command), the reply recorded with its answer's feedback target (1 script) and the
#: job completed (1 script). (7 before the language and the feedback target had trips of their own.)
ROUND_TRIPS = 6 + 1 / MESSAGES
#: The same on the server, scripts' commands included (23 before the delivery record was answered
#: without reading it back and the turnstile's two counters read with one ``MGET``; 21 before a
#: chat thread's first message skipped refreshing a completed counter that cannot exist and
#: looking for an open question on the agent thread just made for it; the language's and the
#: feedback target's ``SET`` are two of these, run inside the scripts; the run's claim is three:
#: its script, the lease's ``SET NX`` and one ``MGET``, where a plain ``MGET`` was one).
COMMANDS = 24 + 1 / MESSAGES


async def commands_run(client: Redis) -> int:
    stats = await client.info("commandstats")
    return sum(int(v["calls"]) for k, v in stats.items() if k not in ("cmdstat_info", "cmdstat_hello"))


async def one_message_each(store: RedisStore, names: list[str]) -> None:
    """A message per name, each in a chat thread of its own, as serve handles a first delivery."""
    for name in names:
        assert await store.accept_job(name, "message", name, f"chat-{name}", {"text": "hi"}, 600)
    jobs = await store.read_jobs("worker", len(names), 0)
    assert len(jobs) == len(names)
    for job in jobs:
        assert await due_and_recalled(store, job) == (None, False)  # its run begins: its fate lease
        await store.thread_with_pending(job.order_key, 600, (f"locale:{job.order_key}", "en", 600))
        await store.set_json(f"live:{job.inbound_id}", {"ts": "1.2"}, 600)
        feedback = (f"feedback:{job.inbound_id}", {"inbound_id": job.inbound_id}, 600)
        record = await store.record_delivery(job.inbound_id, '{"items": []}', 600, ("t", 1.0), feedback)
        assert (record.plan, record.outcomes) == ('{"items": []}', {})
        await store.complete_job(job)


async def test_a_message_costs_six_round_trips_and_24_redis_commands(tmp_path: Path) -> None:
    port = free_port()
    with redis_server(plain(port, tmp_path), lambda: listening(port)):
        proxy = OutageProxy(port)
        await proxy.start()
        store = RedisStore(f"redis://127.0.0.1:{proxy.port}/0", "count")
        server = Redis(port=port)
        try:
            await one_message_each(store, ["warm"])  # the group made, the scripts loaded
            trips, commands = proxy.commands, await commands_run(server)
            names = [f"ev{i}" for i in range(MESSAGES)]
            await one_message_each(store, names)
            trips = proxy.commands - trips
            commands = await commands_run(server) - commands
            assert trips / MESSAGES <= ROUND_TRIPS
            assert commands / MESSAGES <= COMMANDS
            assert all([await store.is_done(name) for name in names])
        finally:
            await store.close()
            await server.aclose()
            await proxy.cut()
