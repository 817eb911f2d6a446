"""HTTP end to end: the real ``clarigate serve`` process, signed Slack events, a fake Slack Web API,
and a stub model that answers each message after 1-2 s, as a hosted model would.

Two workloads, on loopback only (see bench/README.md for what each figure means):

1. **slow-model burst**: ``--conversations`` DMs, each in its own channel, sent at once; each is
   answered when the fake Slack receives its reply. Printed: how many were answered within 1.5x
   their model time, the gateway's overhead (receive to reply, minus the model's time), the serve
   process's CPU per message and its memory. ``--warm-bursts`` (1) bursts like it go first, not
   measured (their CPU printed): a replica that has run a while holds its connections and heap
   at its bursts' size, as the floor's libraries hold theirs warm.
2. **ack path at a steady rate**: ``--rate`` signed events per second for ``--seconds``, to
   ``clarigate serve`` and to a bare slack-bolt app that only acks, alternated in the same run.

Needs Redis (``--redis-url``, database 15 by default; every key goes under a fresh prefix,
deleted at the end) and exits by itself.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.floor import IN_FLIGHT, Floor, bolt_ack_cpu, report_budget, report_floor, store_cpu, web_api_cpu  # noqa: E402
from bench.servers import (  # noqa: E402
    MODEL_TURN,
    FakeSlackProcess,
    cpu_seconds,
    rss_mb,
    serve_beside_bolt,
    serve_processes,
)
from clarigate.agent.models.scripted import turn_delay  # noqa: E402
from clarigate.gateway.runtime.config import GatewayConfig  # noqa: E402
from tests.adapters.slack.fake_slack import BOT_TOKEN, TEAM_ID  # noqa: E402
from tests.adapters.slack.slack_user import SIGNING_SECRET, signed_headers  # noqa: E402

SERVE_WORKERS = GatewayConfig.model_fields["workers"].default  # serve's default


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def event_body(text: str, channel: str, event_id: str) -> bytes:
    """An Events API callback for a direct message, as Slack sends it."""
    event = {"type": "message", "channel_type": "im", "channel": channel, "user": "U1", "text": text}
    event["ts"] = f"{time.time():.6f}"
    return json.dumps(
        {
            "token": "legacy",
            "team_id": TEAM_ID,
            "api_app_id": "A0APP",
            "event": event,
            "type": "event_callback",
            "event_id": event_id,
            "event_time": int(time.time()),
            "authorizations": [{"team_id": TEAM_ID, "user_id": "U0BOT", "is_bot": True}],
        }
    ).encode()


async def send(http: aiohttp.ClientSession, url: str, body: bytes) -> float:
    """POST one signed event; the seconds until the HTTP answer (the ack)."""
    headers = {"Content-Type": "application/json", **signed_headers(body, SIGNING_SECRET)}
    started = time.monotonic()
    async with http.post(url, data=body, headers=headers) as response:
        await response.read()
        if response.status != 200:
            raise RuntimeError(f"{url} answered {response.status}")
    return time.monotonic() - started


async def agent_alone(args: argparse.Namespace, folder: Path) -> tuple[float, float]:
    """The agent's own CPU per turn, for ``--conversations`` turns at once (at most ``--workers``
    at a time, as in serve), with the same model and checkpointer, in this process: what a
    message costs before the gateway adds anything. Two ways: as serve runs it (its events streamed
    to a sink that drops them: LangGraph's ``messages``/``updates`` streaming, which the live
    message asks for, is the agent library's work; ``bench/streaming.py`` measures the same way),
    and plainly invoked (``ainvoke``), for reference."""
    from clarigate.agent.harness import AgentSettings, ClarifyingAgent

    script = folder / "model.yaml"
    settings = AgentSettings(
        model=f"scripted:{script}", checkpointer_url="memory://", allow_clarification=False
    )
    agent = await ClarifyingAgent.create(settings)
    slots = asyncio.Semaphore(min(args.conversations, args.workers or SERVE_WORKERS))

    async def dropped(event: object) -> None:
        return None

    async def turn(i: int | str, streamed: bool) -> None:
        async with slots:
            await agent.run_turn(f"alone-{i}", f"alone {i}", on_event=dropped if streamed else None)

    async def per_turn(streamed: bool) -> float:
        started = time.process_time()
        await asyncio.gather(*(turn(f"{streamed}-{i}", streamed) for i in range(args.conversations)))
        return (time.process_time() - started) / args.conversations

    try:
        await turn(-1, True)  # first-call set-up
        # A B B A: each later round runs on a fuller checkpointer, so neither gains by its place
        order = (True, False, False, True)
        figures = [await per_turn(streamed) for streamed in order]
        return (figures[0] + figures[3]) / 2, (figures[1] + figures[2]) / 2
    finally:
        await agent.aclose()


@dataclass
class Sent:
    """One burst: when each message was sent, its ack's seconds, when its reply came, and the RSS
    each serve process peaked at while it ran."""

    sent: dict[str, float]
    acks: list[float]
    replied: dict[str, float]
    rss_peak: dict[str, float]


async def send_burst(
    args: argparse.Namespace,
    fake: FakeSlackProcess,
    url: str,
    pids: dict[str, int],
    texts: list[str],
    tag: str,
) -> Sent:
    """``texts`` as DMs, each in its own channel, all at once; waits for their replies (until
    ``--timeout``), sampling the RSS of each serve process (``pids``) meanwhile."""
    sent: dict[str, float] = {}
    rss_peak = {name: rss_mb(pid) for name, pid in pids.items()}
    replied: dict[str, float] = {}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=64)) as http:

        async def one(i: int) -> float:
            body = event_body(texts[i], f"D{tag}{i}", f"Ev{tag}{i}")
            sent[texts[i]] = time.monotonic()
            return await send(http, f"{url}/slack/events", body)

        acks = await asyncio.gather(*(one(i) for i in range(len(texts))))
        deadline = time.monotonic() + args.timeout
        while len(replied) < len(texts) and time.monotonic() < deadline:
            for name, pid in pids.items():
                rss_peak[name] = max(rss_peak[name], rss_mb(pid))
            await asyncio.sleep(0.2)
            replied = await fake.replied()
    return Sent(sent, acks, replied, rss_peak)


#: Each serve process's RSS before the first burst, and its peak over the bursts so far (MB).
Rss = tuple[dict[str, float], dict[str, float]]


async def warming_bursts(
    args: argparse.Namespace, fake: FakeSlackProcess, url: str, pids: dict[str, int], run: str
) -> Rss:
    """``--warm-bursts`` bursts like the measured one, first: a replica that has been running
    holds connections (Redis, the Web API) and a heap grown to its bursts' size, as the floor's
    libraries hold theirs warm; the first burst after start opens them. Its CPU is printed."""
    start = {name: rss_mb(pid) for name, pid in pids.items()}
    peak = dict(start)
    for k in range(args.warm_bursts):
        cpu_before = {name: cpu_seconds(pid) for name, pid in pids.items()}
        texts = [f"warm burst {k} {i} {run}" for i in range(args.conversations)]
        done = await send_burst(args, fake, url, pids, texts, f"{run}w{k}b")
        cpu = {name: cpu_seconds(pid) - cpu_before[name] for name, pid in pids.items()}
        peak = {name: max(peak[name], done.rss_peak[name]) for name in pids}
        n = len(texts)
        per = "  ".join(f"{name} {seconds / n * 1000:.2f}" for name, seconds in cpu.items())
        print(
            f"burst {k + 1} after start, not measured (warms serve's connections and heap):"
            f" {len(done.replied)}/{n} answered; serve CPU {sum(cpu.values()) / n * 1000:.2f} ms"
            f" per message ({per})"
        )
        await fake.reset()
    return start, peak


async def burst(
    args: argparse.Namespace, fake: FakeSlackProcess, url: str, pids: dict[str, int], rss: Rss, run: str
) -> float:
    """The slow-model burst; the serve processes' CPU per message. ``rss``: from the warming bursts
    (the RSS the runs in flight add counts from before the first: a warmed heap has grown)."""
    n = args.conversations
    texts = [f"conv {i} {run}" for i in range(n)]
    rss_before, warm_peak = rss
    cpu_before = {name: cpu_seconds(pid) for name, pid in pids.items()}
    done = await send_burst(args, fake, url, pids, texts, f"{run}b")
    sent, acks, replied = done.sent, done.acks, done.replied
    rss_peak = {name: max(warm_peak[name], done.rss_peak[name]) for name in pids}
    cpu = {name: cpu_seconds(pid) - cpu_before[name] for name, pid in pids.items()}
    calls = await fake.calls()
    answered = [t for t in texts if t in replied]
    model = {t: turn_delay(MODEL_TURN, t) for t in texts}
    total = {t: replied[t] - sent[t] for t in answered}
    overhead = [(total[t] - model[t]) * 1000 for t in answered]
    within = sum(1 for t in answered if total[t] <= 1.5 * model[t])
    workers = args.workers or "default"
    processes = args.worker_processes or "default"
    print(
        f"slow-model burst: {n} conversations at once, model 1-2 s per message, workers {workers},"
        f" worker processes {processes}"
    )
    print(f"  answered {len(answered)}/{n}; within 1.5x their model time: {within}/{n}")
    print(f"  last reply {max(total.values(), default=float('nan')):.2f} s after its message")
    p50, p99 = pct(overhead, 0.5), pct(overhead, 0.99)
    print(f"  overhead (receive to reply minus model time): p50 {p50:.0f} ms  p99 {p99:.0f} ms")
    print(
        f"  ack during the burst: p50 {pct(acks, 0.5) * 1000:.1f} ms  p99 {pct(acks, 0.99) * 1000:.1f} ms"
        f"  max {max(acks, default=float('nan')) * 1000:.1f} ms ({sum(1 for a in acks if a > 1.0)} over 1 s)"
    )
    per = "  ".join(f"{name} {seconds / n * 1000:.2f}" for name, seconds in cpu.items())
    print(
        f"  serve CPU: {sum(cpu.values()) / n * 1000:.2f} ms per message ({per}; {sum(cpu.values()):.2f} s)"
    )
    print("  Web API calls: " + ", ".join(f"{m} {c}" for m, c in sorted(calls.items())))
    in_flight = min(n, args.workers or SERVE_WORKERS)
    runs_in = [name for name in pids if name.startswith("worker")] or ["serve"]
    growth = sum(rss_peak[name] - rss_before[name] for name in runs_in)
    each = ", ".join(f"{name} {rss_before[name]:.0f} -> {rss_peak[name]:.0f}" for name in pids)
    print(
        f"  serve RSS: {sum(rss_before.values()):.0f} MB before, {sum(rss_peak.values()):.0f} MB peak"
        f" ({each} MB; ~{growth * 1024 / in_flight:.0f} KB per run in flight)"
    )
    return sum(cpu.values()) / n


async def measure_floor(
    args: argparse.Namespace,
    fake: FakeSlackProcess,
    bolt_url: str,
    bolt_cpu: Callable[[], float],
    run: str,
    in_flight: int,
) -> Floor:
    """The libraries' floor per message (``bench/floor.py``), each alone, ``in_flight`` calls at
    once, right after the burst."""
    n = args.floor
    body = lambda i: event_body(f"floor {i}", f"DF{i}", f"Ev{run}f{in_flight}-{i}")  # noqa: E731
    ack = await bolt_ack_cpu(bolt_url, bolt_cpu, n, send, body, in_flight)
    web_api = await web_api_cpu(BOT_TOKEN, fake.api_url, n, in_flight)
    await fake.reset()
    redis, trips = await store_cpu(args.redis_url, f"bench-{run}-floor{in_flight}", n, in_flight)
    return Floor(ack=ack, web_api=web_api, redis=redis, round_trips=trips, in_flight=in_flight)


async def warm_up(fake: FakeSlackProcess, urls: dict[str, str], run: str) -> None:
    """A few messages to each target, one at a time, so lazy set-up (bolt's one auth.test, first
    imports, connection pools) is not measured; waits until serve has answered its own."""
    async with aiohttp.ClientSession() as http:
        for name, url in urls.items():
            for i in range(5):
                await send(http, url, event_body(f"warm {name} {i} {run}", f"DW{i}", f"Ev{run}w{name}{i}"))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if sum(1 for text in await fake.replied() if text.startswith("warm ")) >= 5:
            break
        await asyncio.sleep(0.1)
    await fake.reset()


async def steady(urls: dict[str, str], pids: dict[str, int], args: argparse.Namespace, run: str) -> None:
    """``--rate`` events per second to each target in turn, ``--rounds`` times; ack latency, and
    the CPU per request of the process that acks (``pids``: clarigate's web process, bolt).

    This process's collector stays out of the rounds, as ``timeit``'s does: what the benchmark
    built so far (the agent alone and its checkpoints) is frozen, and no collection runs while a
    round sends. A full collection here took 50-90 ms and, landing in a round, was counted as
    the acks' latency of whichever server that round measured."""
    gc.collect()
    gc.freeze()
    latencies: dict[str, list[float]] = {name: [] for name in urls}
    cpu: dict[str, float] = dict.fromkeys(urls, 0.0)
    count = int(args.rate * args.seconds)
    per_round: list[str] = []
    for round_number in range(args.rounds):
        p99 = {}
        for name, url in urls.items():
            gc.disable()
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=64)) as http:
                before = cpu_seconds(pids[name])
                start = time.monotonic()
                tasks = []
                for i in range(count):
                    await asyncio.sleep(max(0.0, start + i / args.rate - time.monotonic()))
                    text, event_id = f"steady {round_number} {i} {run}", f"Ev{run}{name}{round_number}-{i}"
                    body = event_body(text, f"DS{i}", event_id)
                    tasks.append(asyncio.create_task(send(http, url, body)))
                found = await asyncio.gather(*tasks)
                latencies[name] += found
                cpu[name] += cpu_seconds(pids[name]) - before
                p99[name] = pct(found, 0.99) * 1000
            gc.enable()
        per_round.append(" / ".join(f"{v:.1f}" for v in p99.values()))
    rate, seconds, rounds = args.rate, args.seconds, args.rounds
    print(f"ack path: {rate:.0f} signed events/s for {seconds:.0f} s, {rounds} rounds each, alternated")
    for name, values in latencies.items():
        ms = [v * 1000 for v in values]
        print(
            f"  {name:<16} p50 {pct(ms, 0.5):6.1f} ms   p99 {pct(ms, 0.99):6.1f} ms   ({len(ms)} requests;"
            f" {cpu[name] / len(ms) * 1000:.2f} ms CPU each)"
        )
    print(f"  p99 per round ({' / '.join(urls)}): " + ", ".join(f"{r} ms" for r in per_round))


async def redis_commands(url: str) -> dict[str, int]:
    """Commands the Redis server ran so far, by name (``INFO commandstats``)."""
    from redis.asyncio import Redis

    client = Redis.from_url(url)
    try:
        info = await client.info("commandstats")
    finally:
        await client.aclose()
    return {name.removeprefix("cmdstat_"): int(value["calls"]) for name, value in info.items()}


async def main(args: argparse.Namespace) -> int:
    async with serve_beside_bolt(args) as servers:
        fake, targets, run = servers.fake, servers.targets, servers.run
        await warm_up(fake, targets, run)
        if args.conversations:
            pids = serve_processes(servers.serve.pid)
            rss = await warming_bursts(args, fake, servers.url, pids, run)
            alone, plain = await agent_alone(args, servers.folder)
            stats_before = await redis_commands(args.redis_url)
            per_message = await burst(args, fake, servers.url, pids, rss, run)
            stats = {k: v - stats_before.get(k, 0) for k, v in (await redis_commands(args.redis_url)).items()}
            stats = {k: v for k, v in stats.items() if v > 0 and k not in ("info", "ping")}
            if args.own_redis:  # alone on it: every command is the bot's (and this benchmark's polls)
                per = ", ".join(
                    f"{k} {v / args.conversations:.2f}"
                    for k, v in sorted(stats.items(), key=lambda kv: -kv[1])
                )
                print(f"  Redis commands per message: {sum(stats.values()) / args.conversations:.2f} ({per})")
            print(
                f"  the agent alone: {alone * 1000:.2f} ms CPU per turn (same model, memory://, here;"
                f" its events streamed as serve asks, dropped; {plain * 1000:.2f} ms invoked without"
                f" streaming); the gateway's own: {(per_message - alone) * 1000:.2f} ms per message"
            )
            if args.floor:
                bolt_cpu = lambda: cpu_seconds(servers.bolt.pid)  # noqa: E731
                # the default few at once, and as many as the burst had in flight (like for like)
                at_once = sorted({IN_FLIGHT, min(args.conversations, args.workers or SERVE_WORKERS)})
                floors = [
                    await measure_floor(args, fake, targets["bare slack-bolt"], bolt_cpu, run, k)
                    for k in at_once
                ]
                report_floor(floors, per_message, alone)
            report_budget(per_message, alone, MODEL_TURN.delay_seconds[0])
        if args.rounds:
            await steady(targets, servers.acking(), args, run)
    return 0


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--conversations", type=int, default=200, help="burst size (default 200; 0: none)")
    parser.add_argument(
        "--warm-bursts",
        type=int,
        default=1,
        help="bursts sent before the measured one, to warm serve's connections and heap (default 1)",
    )
    parser.add_argument("--workers", type=int, default=0, help="runs in flight in serve (0: its default)")
    parser.add_argument("--role", choices=("auto", "all"), help="serve's role (default: its own, auto)")
    parser.add_argument(
        "--worker-processes", help="serve's worker_processes: a number or auto (default: its own, auto)"
    )
    parser.add_argument("--rate", type=float, default=200.0, help="events per second on the ack path")
    parser.add_argument("--seconds", type=float, default=3.0, help="length of each steady round")
    parser.add_argument("--rounds", type=int, default=2, help="steady rounds per server (0: none)")
    parser.add_argument(
        "--floor", type=int, default=500, help="messages for the libraries' floor (default 500; 0: none)"
    )
    parser.add_argument("--timeout", type=float, default=120.0, help="give up waiting for replies after this")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/15")
    parser.add_argument(
        "--own-redis", action="store_true", help="start a redis-server of its own (instead of --redis-url)"
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    try:  # the event loop serve runs on, for the agent-alone figure as for the load
        import uvloop

        sys.exit(uvloop.run(main(parse())))
    except ImportError:  # pragma: no cover - installed with clarigate
        sys.exit(asyncio.run(main(parse())))
