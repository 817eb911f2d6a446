"""Acks in a burst: ``--size`` (1,000) signed Slack events sent at once to ``clarigate serve`` and to
a bare slack-bolt app, alternated for ``--rounds`` rounds, each ack timed; the events to clarigate
are real messages whose runs (1–2 s of stub model each) go on through the next rounds.

Two times per request: *on the wire* (from the moment its headers were written to a connection
to the HTTP answer: what the platform's own timeout counts) and *from the burst's start* (the
client's queue for one of ``--connections`` connections included). Printed per round and target:
p50, p99 and the largest of both, how many acks took over 1 s on the wire, the acking process's
CPU per request, and whether the kernel schedules by autogroup (``kernel.sched_autogroup_enabled``:
where it is on, the web process sets the worker processes' autogroup niceness, see
deploy/README.md "Processes"; where it is off, their own). To measure a host without autogroup on
one with it: ``sysctl kernel.sched_autogroup_enabled=0`` (root), run, and set it back.

``python bench/ack_burst.py --own-redis`` (see bench/README.md "Acks in a burst").
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.http_e2e import event_body, pct  # noqa: E402
from bench.servers import cpu_seconds, serve_beside_bolt  # noqa: E402
from tests.adapters.slack.slack_user import SIGNING_SECRET, signed_headers  # noqa: E402

AUTOGROUP = Path("/proc/sys/kernel/sched_autogroup_enabled")


def autogroup_state() -> str:
    try:
        return "on" if AUTOGROUP.read_text().strip() == "1" else "off"
    except OSError:
        return "absent"


def wire_tracer(sent: dict[int, float]) -> aiohttp.TraceConfig:
    """Notes, per request (by its ``trace_request_ctx`` number), when its headers went out."""
    trace = aiohttp.TraceConfig()

    async def headers_sent(_session: Any, context: Any, _params: Any) -> None:
        sent[context.trace_request_ctx["n"]] = time.monotonic()

    trace.on_request_headers_sent.append(headers_sent)
    return trace


async def one_burst(url: str, size: int, connections: int, label: str) -> tuple[list[float], list[float]]:
    """``size`` events at once: each one's seconds on the wire and from the burst's start."""
    sent: dict[int, float] = {}
    connector = aiohttp.TCPConnector(limit=connections)
    bodies = [event_body(f"burst {label} {i}", f"DB{label}{i}", f"Ev{label}-{i}") for i in range(size)]
    async with aiohttp.ClientSession(connector=connector, trace_configs=[wire_tracer(sent)]) as http:

        async def post(n: int) -> float:
            headers = {"Content-Type": "application/json", **signed_headers(bodies[n], SIGNING_SECRET)}
            context = {"n": n}
            async with http.post(url, data=bodies[n], headers=headers, trace_request_ctx=context) as response:
                await response.read()
                if response.status != 200:
                    raise RuntimeError(f"{url} answered {response.status}")
            return time.monotonic()

        start = time.monotonic()
        done = await asyncio.gather(*(post(n) for n in range(size)))
    return [done[n] - sent[n] for n in range(size)], [t - start for t in done]


def report(name: str, wire: list[float], total: list[float], cpu: float) -> None:
    w, t = [v * 1000 for v in wire], [v * 1000 for v in total]
    slow = sum(1 for v in w if v > 1000)
    print(
        f"  {name:<16} on the wire p50 {pct(w, 0.5):6.1f}  p99 {pct(w, 0.99):6.1f}  max {max(w):6.1f} ms"
        f"  (over 1 s: {slow})   from the start p50 {pct(t, 0.5):6.0f}  max {max(t):6.0f} ms"
        f"   {cpu / len(w) * 1000:.2f} ms CPU each"
    )


async def rounds(args: argparse.Namespace, targets: dict[str, str], pids: dict[str, int], run: str) -> None:
    print(
        f"acks in a burst: {args.size} events at once over {args.connections} connections,"
        f" {args.rounds} rounds, alternated; autogroup scheduling {autogroup_state()}"
    )
    for number in range(args.rounds):
        print(f" round {number + 1}")
        for name, url in targets.items():
            before = cpu_seconds(pids[name])
            label = f"{run}{number}{name[0]}"
            wire, total = await one_burst(url, args.size, args.connections, label)
            report(name, wire, total, cpu_seconds(pids[name]) - before)
        await asyncio.sleep(args.pause)


async def main(args: argparse.Namespace) -> int:
    async with serve_beside_bolt(args) as servers:
        for name, target in servers.targets.items():  # first imports, bolt's auth.test, connection pools
            await one_burst(target, 20, args.connections, f"{servers.run}warm{name[0]}")
        await asyncio.sleep(3)
        await rounds(args, servers.targets, servers.acking(), servers.run)
    return 0


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--size", type=int, default=1000, help="events per burst (default 1000)")
    parser.add_argument("--connections", type=int, default=64, help="client connections (default 64)")
    parser.add_argument("--rounds", type=int, default=3, help="bursts per target (default 3)")
    parser.add_argument("--pause", type=float, default=1.0, help="seconds between rounds")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/15")
    parser.set_defaults(workers=0, role=None, worker_processes=None)  # serve's own defaults
    parser.add_argument(
        "--own-redis", action="store_true", help="start a redis-server of its own (instead of --redis-url)"
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    try:
        import uvloop

        sys.exit(uvloop.run(main(parse())))
    except ImportError:  # pragma: no cover - installed with clarigate
        sys.exit(asyncio.run(main(parse())))
