"""Order and exactly-once under crashes: two ``clarigate serve`` replicas, chat threads of several
messages each, and ``kill -9`` of replicas, of worker processes, of Redis (and of PostgreSQL).

Not a test: it prints figures (bench/README.md, "cluster_faults.py"). What runs, on 127.0.0.1:

- a ``redis-server`` of its own on a free port (``appendonly yes``, ``appendfsync everysec``);
- checkpoints in PostgreSQL: ``--pg-url`` (the machine's, never faulted), or with ``--own-postgres``
  a cluster of its own (``initdb`` in a temporary folder, a free port) that can be restarted,
  killed and kept down;
- the fake platform of the fault tests (``tests/deploy/fault_platform.py``) in this process, with
  100-150 ms latency: it records every send (``arrivals``) and shows one message per delivery id;
- two replicas of one bot (``clarigate serve``: a web process and its worker processes), the
  scripted model answering each message after 1-2 s, with ``--tools`` a tool with a side effect
  (``bench/cluster_tool.py``) called once per message before the answer;
- ``--threads`` people, each writing ``--messages`` messages to their own chat thread, the next
  one once the previous was acknowledged and a short pause; each webhook goes to a random live
  replica, and one that is refused (the replica is dead, Redis is down) is retried to any live one
  with backoff, as a platform's retries behind a load balancer would;
- faults on a schedule drawn from ``--seed``: ``--kills`` kill -9 of a whole replica (every process
  of it; restarted a few seconds later) or of one worker process (its web process starts it
  again), ``--redis-restarts`` kill -9 of Redis restarted at once, ``--redis-down`` seconds of Redis
  killed and kept down once, ``--pg-faults`` restarts/kill -9/30 s outages of the own PostgreSQL;
  with ``--redis-lose`` each Redis kill also loses its last seconds of writes (the append-only file
  cut back, as a machine crash with ``appendfsync everysec`` would: a kill -9 alone loses nothing).

Then it waits for quiescence and prints what a user would have seen.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.cluster_outcome import ANSWER, inversions, pending_jobs, what_was_shown  # noqa: E402
from bench.cluster_stores import OwnPostgres, OwnRedis  # noqa: E402
from clarigate.gateway.store.redis import RedisStore  # noqa: E402
from tests.deploy.fault_platform import FakePlatform  # noqa: E402
from tests.deploy.test_delivery_faults import Replicas  # noqa: E402
from tests.deploy.test_sigterm import free_port, serve_command  # noqa: E402

START = time.monotonic()


def say(line: str) -> None:
    print(f"[{time.monotonic() - START:7.1f}s] {line}", flush=True)


def script(tools: bool, messages: int) -> list[dict[str, Any]]:
    """The model's turns: per message a tool call then the answer (``--tools``), or the answer;
    three times the turns needed, so runs repeated after crashes still find their turn."""
    answer = {"content": ANSWER + "{last_user}", "delay_seconds": [1.0, 2.0]}
    if not tools:
        return [answer] * (3 * messages)
    call = {"tool_calls": [{"name": "note", "args": {"text": "{last_user}"}}], "delay_seconds": [0.5, 1.0]}
    answer = {**answer, "delay_seconds": [0.5, 1.0]}
    return [call, answer] * (3 * messages)


# --- the replicas -----------------------------------------------------------------------------


def children(pid: int) -> list[int]:
    """Every descendant of ``pid`` (from /proc)."""
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            text = Path(f"/proc/{pid}/task/{task}/children").read_text()
            for child in map(int, text.split()):
                found += [child, *children(child)]
    except OSError:
        pass
    return found


def alive(pid: int) -> bool:
    """False for a process gone or dead and not yet reaped (a zombie)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class Cluster(Replicas):
    """Two replica slots of one bot; a slot whose replica died is started again."""

    def __init__(self, tmp: Path, platform: FakePlatform, redis_url: str, args: argparse.Namespace) -> None:
        super().__init__(tmp, platform, redis_url)
        (tmp / "data").mkdir(exist_ok=True)
        model = tmp / "model.json"
        model.write_text(json.dumps(script(args.tools, args.messages)))
        self.tool_log = tmp / "tools.jsonl"
        self.env.update(
            {
                "LLM_MODEL": f"scripted:{model}",
                "CHECKPOINTER_URL": args.pg_url,
                "CLARIGATE_STALE_CLAIM_SECONDS": str(args.stale),
                "CLARIGATE_WORKERS": str(args.workers),
                "CLUSTER_TOOL_LOG": str(self.tool_log),
            }
        )
        if args.tools:
            self.env["CLARIGATE_AGENT__TOOLS"] = '["bench.cluster_tool:note"]'
        self.slots: list[subprocess.Popen[bytes] | None] = [None, None]
        self.ready: set[int] = set()  # pids answering /readyz once
        self.balanced: list[int | None] = [None, None]  # each slot's replica the balancer knows
        self.restarts = 0

    async def start_slot(self, slot: int) -> None:
        """Start the slot's replica and wait until it is ready (Redis may be down: long)."""
        port = free_port()
        log = (Path(self.env["CLARIGATE_DATA_DIR"]).parent / f"replica-{slot}-{port}.log").open("ab")
        command = serve_command(port)
        proc = subprocess.Popen(command, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT)  # noqa: ASYNC220
        self.procs.append(proc)
        self.slots[slot] = proc
        url = self.urls[proc.pid] = f"http://127.0.0.1:{port}"
        async with httpx.AsyncClient(timeout=5) as http:
            deadline = time.monotonic() + 600
            while proc.poll() is None and time.monotonic() < deadline:
                try:
                    if (await http.get(f"{url}/readyz")).status_code == 200:
                        self.ready.add(proc.pid)
                        self.balanced[slot] = proc.pid
                        return
                except httpx.HTTPError:
                    pass
                await asyncio.sleep(0.2)
        say(f"replica {slot} (pid {proc.pid}) did not become ready")

    def balanced_urls(self) -> list[str]:
        """What the load balancer sends to: each slot's replica once it was ready, dead or not
        (a killed one refuses the connection until its successor is ready)."""
        return [self.urls[pid] for pid in self.balanced if pid is not None]

    async def up_slot(self, slot: int) -> int:
        """``slot`` when its replica is up, else the other one once one is up (at most 60 s)."""
        for _ in range(600):
            for candidate in (slot, 1 - slot):
                proc = self.slots[candidate]
                if proc is not None and proc.poll() is None and proc.pid in self.ready:
                    return candidate
            await asyncio.sleep(0.1)
        return slot

    def kill_replica(self, slot: int) -> str:
        proc = self.slots[slot]
        if proc is None or proc.poll() is not None or proc.pid not in self.ready:
            return "not up (skipped)"
        pids = [proc.pid, *children(proc.pid)]
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait()
        self.slots[slot] = None
        return f"pids {pids}"

    def kill_worker(self, slot: int) -> str:
        proc = self.slots[slot]
        if proc is None or proc.poll() is not None or proc.pid not in self.ready:
            return "not up (skipped)"
        workers = [pid for pid in children(proc.pid) if alive(pid)]
        if not workers:
            return "no worker process"
        pid = random.Random(proc.pid + len(workers)).choice(workers)  # type: ignore[union-attr]
        os.kill(pid, signal.SIGKILL)
        return f"pid {pid}"

    async def watch(self) -> None:
        """An orchestrator: a replica that exited by itself is started again."""
        while True:
            await asyncio.sleep(1)
            for slot, proc in enumerate(self.slots):
                if proc is not None and proc.poll() is not None:
                    say(f"replica {slot} exited by itself ({proc.returncode}): starting it again")
                    self.restarts += 1
                    await self.start_slot(slot)


# --- the people -------------------------------------------------------------------------------


@dataclass
class Tally:
    acked: dict[str, str] = field(default_factory=dict)  # event id -> outcome
    never_acked: list[str] = field(default_factory=list)
    refusals: Counter[str] = field(default_factory=Counter)  # why a webhook was tried again
    sent_at: dict[str, float] = field(default_factory=dict)


async def webhook(
    cluster: Cluster, http: httpx.AsyncClient, body: dict[str, str], tally: Tally, budget: float
) -> None:
    """Deliver one event as a platform would: retried to any live replica until acknowledged."""
    rng = random.Random(body["event_id"])
    deadline = time.monotonic() + budget
    attempt = 0
    while time.monotonic() < deadline:
        urls = cluster.balanced_urls()
        if urls:
            try:
                response = await http.post(f"{rng.choice(urls)}/test/say", json=body)
                if response.status_code == 200:
                    tally.acked[body["event_id"]] = response.json()["outcome"]
                    return
                tally.refusals[f"HTTP {response.status_code}"] += 1
            except httpx.HTTPError as exc:
                tally.refusals[type(exc).__name__] += 1
        attempt += 1
        await asyncio.sleep(min(0.2 * 2**attempt, 5.0))
    tally.never_acked.append(body["event_id"])


async def person(cluster: Cluster, thread: int, args: argparse.Namespace, tally: Tally) -> None:
    rng = random.Random(f"{args.seed}-{thread}")
    await asyncio.sleep(rng.uniform(0, args.spread))
    async with httpx.AsyncClient(timeout=10) as http:
        for k in range(args.messages):
            event = f"t{thread}-m{k}"
            tally.sent_at[event] = time.monotonic()
            body = {"chat": f"t{thread}", "text": f"t{thread} m{k}", "event_id": event}
            await webhook(cluster, http, body, tally, args.webhook_budget)
            await asyncio.sleep(rng.uniform(*args.pause))


# --- the faults -------------------------------------------------------------------------------


def schedule(args: argparse.Namespace) -> list[tuple[float, str]]:
    """(seconds from the start, fault) drawn from the seed; kills alternate between the slots."""
    rng = random.Random(args.seed)
    window = (5.0, max(10.0, args.spread + 10.0))
    kinds = args.kill_kinds.split(",")
    slot = lambda i: (i // len(kinds)) % 2  # noqa: E731 (each kind reaches both slots)
    faults = [(rng.uniform(*window), f"{kinds[i % len(kinds)]}:{slot(i)}") for i in range(args.kills)]
    faults += [(rng.uniform(*window), "redis-restart") for _ in range(args.redis_restarts)]
    if args.redis_down:
        faults.append((rng.uniform(*window), "redis-down"))
    pg = ["pg-restart", "pg-kill", "pg-down"]
    faults += [(rng.uniform(*window), pg[i % 3]) for i in range(args.pg_faults)]
    return sorted(faults)


async def restart_later(cluster: Cluster, slot: int, delay: float) -> None:
    await asyncio.sleep(delay)
    await cluster.start_slot(slot)
    proc = cluster.slots[slot]
    say(f"replica {slot} back (pid {proc.pid if proc is not None else '-'})")


async def run_faults(
    cluster: Cluster, redis: OwnRedis, pg: OwnPostgres | None, args: argparse.Namespace
) -> None:
    """Each family of faults (replicas, Redis, PostgreSQL) on its own timeline, from one start."""
    began = time.monotonic()
    families: dict[str, list[tuple[float, str]]] = {}
    for at, fault in schedule(args):
        families.setdefault(fault.split("-")[0].split(":")[0].replace("worker", "replica"), []).append(
            (at, fault)
        )
    later: list[asyncio.Task[None]] = []
    await asyncio.gather(
        *(fault_line(cluster, redis, pg, args, began, faults, later) for faults in families.values())
    )
    await asyncio.gather(*later)


async def fault_line(
    cluster: Cluster,
    redis: OwnRedis,
    pg: OwnPostgres | None,
    args: argparse.Namespace,
    began: float,
    faults: list[tuple[float, str]],
    later: list[asyncio.Task[None]],
) -> None:
    rng = random.Random(f"{args.seed}-faults")
    for at, fault in faults:
        await asyncio.sleep(max(0.0, began + at - time.monotonic()))
        kind, _, slot_text = fault.partition(":")
        slot = await cluster.up_slot(int(slot_text)) if slot_text else 0
        if kind == "replica":
            killed = cluster.kill_replica(slot)
            say(f"kill -9 replica {slot}: {killed}")
            if killed.startswith("pids"):
                later.append(asyncio.create_task(restart_later(cluster, slot, rng.uniform(3, 6))))
        elif kind == "worker":
            say(f"kill -9 a worker process of replica {slot}: {cluster.kill_worker(slot)}")
        elif kind.startswith("redis"):
            redis.kill()
            down = args.redis_down if kind == "redis-down" else 1.0
            lost = (
                f", its last {args.redis_lose} s lost ({redis.lose_tail(args.redis_lose)} bytes)"
                if args.redis_lose
                else ""
            )
            say(f"kill -9 redis{lost}; down {down:.0f} s")
            await asyncio.sleep(down)
            await redis.start()
            say("redis back")
        elif pg is not None:
            await pg_fault(pg, kind)


async def pg_fault(pg: OwnPostgres, kind: str) -> None:
    if kind == "pg-restart":
        pg.stop(signal.SIGINT)
        say("postgres stopped (fast shutdown), starting again")
    elif kind == "pg-kill":
        pg.stop(signal.SIGKILL)
        say("kill -9 postgres (every process), starting again")
    else:
        pg.stop(signal.SIGKILL)
        say("kill -9 postgres; down 30 s")
        await asyncio.sleep(30)
    await pg.start()
    say("postgres back")


# --- the outcome ------------------------------------------------------------------------------


async def settle(cluster: Cluster, platform: FakePlatform, tally: Tally, cap: float) -> None:
    """Until every acknowledged message has its answer, no job is pending and 5 s went quiet."""
    deadline = time.monotonic() + cap
    seen, quiet_since = -1, time.monotonic()
    while time.monotonic() < deadline:
        if len(platform.arrivals) != seen:
            seen, quiet_since = len(platform.arrivals), time.monotonic()
        answered = {
            item["text"][len(ANSWER) :] for item in platform.shown.values() if item["text"].startswith(ANSWER)
        }
        waiting = [e for e in tally.acked if e.replace("-", " ") not in answered]
        if not waiting and time.monotonic() - quiet_since > 5:
            if await pending_jobs(cluster.redis_url, cluster.prefix) == 0:
                return
        await asyncio.sleep(1)
    say(f"not quiet after {cap:.0f} s")


def tool_calls(cluster: Cluster) -> Counter[str]:
    """Calls of the tool per message text."""
    if not cluster.tool_log.exists():
        return Counter()
    return Counter(json.loads(line)["text"] for line in cluster.tool_log.read_text().splitlines())


async def report(cluster: Cluster, platform: FakePlatform, tally: Tally, args: argparse.Namespace) -> None:
    """Print what the people saw."""
    shown = what_was_shown(platform)
    acked = [e.replace("-", " ") for e in tally.acked]
    lost = [m for m in acked if m not in shown.answers]
    doubled = {m: len(ids) for m, ids in shown.answers.items() if len(ids) > 1}
    per_delivery = Counter(a["delivery_id"] for a in platform.arrivals)
    within = sum(n - 1 for n in per_delivery.values() if n > 1)
    pairs = {chat: inversions(seq) for chat, seq in shown.order.items()}
    store = RedisStore(cluster.redis_url, cluster.prefix)
    try:
        not_done = [e for e in tally.acked if not await store.is_done(f"test:{e}")]
    finally:
        await store.close()
    pending = await pending_jobs(cluster.redis_url, cluster.prefix)
    tools = "on" if args.tools else "off"
    outcomes = dict(Counter(tally.acked.values()))
    print(f"\n== {args.threads} threads x {args.messages} messages, tools {tools}, seed {args.seed}")
    print(f"events sent {len(tally.sent_at)}, acknowledged {len(tally.acked)} {outcomes}, ", end="")
    print(f"never acknowledged {len(tally.never_acked)}; webhooks tried again: {dict(tally.refusals)}")
    print(f"answers lost: {len(lost)} {lost[:5]}")
    twice = dict(list(doubled.items())[:5])
    print(f"answers shown twice (two delivery ids: beyond the window): {len(doubled)} {twice}")
    print(f"sends repeated under the same delivery id (the documented window): {within}")
    print(f"jobs never completed (no done marker): {len(not_done)} {not_done[:5]}; ", end="")
    print(f"pending in the stream: {pending}")
    print(f"out-of-order pairs: {sum(pairs.values())} in {sum(1 for n in pairs.values() if n)} threads")
    print(f"error replies: {sum(shown.errors.values())} {dict(shown.errors)}")
    print(
        f'"your message is kept" notices (over 5 s of outage): {sum(shown.kept.values())} {dict(shown.kept)}'
    )
    if args.tools:
        calls = tool_calls(cluster)
        spread = Counter(calls.get(m, 0) for m in acked)
        odd = sorted(m for m in acked if calls.get(m, 0) != 1)
        print(
            f"tool calls per message: {dict(sorted(spread.items()))} ({sum(calls.values())} calls); ", end=""
        )
        print(f"not once: {odd[:8]}")
    print(f"replicas restarted by the orchestrator: {cluster.restarts}; load average {os.getloadavg()}")


async def main(args: argparse.Namespace) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="cluster-faults-"))
    redis = OwnRedis(tmp / "redis")
    await redis.start()
    aof = asyncio.create_task(redis.watch_aof())
    pg = OwnPostgres(tmp / "pg") if args.own_postgres else None
    if pg is not None:
        await pg.start()
        args.pg_url = pg.url
    platform = FakePlatform(latency=(0.1, 0.15))
    await platform.start()
    cluster = Cluster(tmp, platform, redis.url, args)
    tally = Tally()
    try:
        await asyncio.gather(cluster.start_slot(0), cluster.start_slot(1))
        say(f"two replicas ready; load average {os.getloadavg()}; faults {schedule(args)}")
        watcher = asyncio.create_task(cluster.watch())
        people = asyncio.gather(*(person(cluster, i, args, tally) for i in range(args.threads)))
        await run_faults(cluster, redis, pg, args)
        await people
        say(f"every event sent; waiting for quiescence (up to {args.settle:.0f} s)")
        await settle(cluster, platform, tally, args.settle)
        watcher.cancel()
        aof.cancel()
        await report(cluster, platform, tally, args)
        (tmp / "arrivals.json").write_text(json.dumps(platform.arrivals))  # what the platform got, in order
    finally:
        await cluster.close()
        await platform.stop()
        redis.kill()
        if pg is not None:
            pg.stop(signal.SIGKILL)
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print(f"logs kept in {tmp}")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--threads", type=int, default=40)
    parser.add_argument("--messages", type=int, default=5)
    parser.add_argument("--spread", type=float, default=60.0, help="threads start within this many seconds")
    parser.add_argument(
        "--pause", type=float, nargs=2, default=(0.3, 2.0), help="between a person's messages"
    )
    parser.add_argument(
        "--tools", action="store_true", help="the model calls a tool with a side effect per message"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kills", type=int, default=8)
    parser.add_argument("--kill-kinds", default="replica,worker", help="comma-separated: replica, worker")
    parser.add_argument("--redis-restarts", type=int, default=0)
    parser.add_argument("--redis-down", type=float, default=0.0, help="once: seconds Redis stays down")
    parser.add_argument(
        "--redis-lose",
        type=float,
        default=0.0,
        help="seconds of Redis writes each kill loses (a machine crash)",
    )
    parser.add_argument("--own-postgres", action="store_true")
    parser.add_argument(
        "--pg-faults", type=int, default=0, help="with --own-postgres: restart, kill -9, 30 s down"
    )
    parser.add_argument("--pg-url", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--stale", type=float, default=3.0, help="the replicas' stale_claim_seconds")
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--webhook-budget", type=float, default=600.0)
    parser.add_argument("--settle", type=float, default=240.0)
    parser.add_argument("--keep", action="store_true", help="keep the logs")
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse_args()))
