"""Gateway throughput against the agent alone, measured in one run.

Pushes conversations through the whole core (Redis store on 127.0.0.1, stream
workers, the offline model with a SQLite checkpointer (serve's default) and then with
``memory://``, the in-memory test adapter), then runs the same conversations straight through
``ClarifyingAgent.run_turn``, and prints messages/s, accept-to-reply latency,
Redis round trips per inbound message and whether the targets hold
(the target: at least 0.8x the agent's throughput, at most 6 round trips).

    python bench/gateway_throughput.py --n 200
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from bench.servers import delete_prefix  # noqa: E402
from clarigate.adapters.testing import TestAdapter  # noqa: E402
from clarigate.agent.harness import AgentSettings, ClarifyingAgent  # noqa: E402
from clarigate.agent.protocol import AnsweredBy, answer_message_text, answer_with_option  # noqa: E402
from clarigate.gateway.boundary.messages import Conversation, MessageRef
from clarigate.gateway.boundary.outbound_items import ClarificationOut, Outbound
from clarigate.gateway.flow.intake import Gateway  # noqa: E402
from clarigate.gateway.runners.in_process import LangGraphRunner  # noqa: E402
from clarigate.gateway.runtime.app import freeze_startup_objects  # noqa: E402
from clarigate.gateway.runtime.config import GatewayConfig  # noqa: E402
from clarigate.gateway.store.redis import RedisStore  # noqa: E402

PLAIN_TEXT = "summarise the release notes for me"  # the offline model answers without asking
ASKING_TEXT = "which database should we use?"  # the offline model asks; a click answers
MIN_RATIO, MAX_ROUND_TRIPS = 0.8, 6.0


@dataclass
class Phase:
    """What one measured phase saw: inbound messages, seconds, per-message latencies."""

    messages: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # this process only (the Redis server's share is not in it)
    latencies: list[float] = field(default_factory=list)

    @property
    def cpu_per_message(self) -> float:
        """Milliseconds of this process's CPU per inbound message."""
        return 1000 * self.cpu_seconds / self.messages if self.messages else 0.0

    @property
    def rate(self) -> float:
        """Inbound messages per second."""
        return self.messages / self.seconds if self.seconds else 0.0

    def percentile(self, q: float) -> float:
        """Latency at quantile ``q`` in milliseconds."""
        ordered = sorted(self.latencies)
        return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


class ReplyWatcher(TestAdapter):
    """The test platform, plus a future per chat resolved when its question or reply arrives."""

    def __init__(self, gateway: Gateway) -> None:
        super().__init__(gateway)
        self._waiting: dict[tuple[str, str], asyncio.Future[Outbound]] = {}

    def expect(self, chat: str, kind: str) -> asyncio.Future[Outbound]:
        """A future for the next item of ``kind`` ("clarification" or "reply") sent to ``chat``."""
        future: asyncio.Future[Outbound] = asyncio.get_running_loop().create_future()
        self._waiting[(chat, kind)] = future
        return future

    async def send(self, conversation: Conversation, item: Outbound) -> MessageRef | None:
        """Wake whoever waits for this item; keep only questions (``click`` looks them up).

        A real adapter keeps nothing either; a growing list of every item sent would make
        the garbage collector's work, and so the gateway's figures, grow with ``--n``.
        """
        if isinstance(item, ClarificationOut):
            ref = await super().send(conversation, item)
        else:
            ref = MessageRef(platform=self.platform, chat_id=conversation.chat_id, message_id="out")
        kind = {"clarification": "clarification", "text": "reply", "error": "reply"}.get(item.kind)
        future = self._waiting.pop((conversation.chat_id, kind), None) if kind else None
        if future is not None and not future.done():
            future.set_result(item)
        return ref


async def run_window(
    count: int, concurrency: int, one: Callable[[int], Awaitable[None]]
) -> tuple[float, float]:
    """Run ``one(i)`` for ``count`` conversations, ``concurrency`` at a time; wall and CPU seconds."""
    gate = asyncio.Semaphore(concurrency)

    async def bounded(i: int) -> None:
        async with gate:
            await one(i)

    started, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(bounded(i) for i in range(count)))
    return time.perf_counter() - started, time.process_time() - cpu


async def agent_alone(agent: ClarifyingAgent, n: int, concurrency: int, asking: bool, tag: str) -> Phase:
    """The same conversations straight through ``run_turn`` (no store, no workers, no adapter)."""
    phase = Phase()
    by = AnsweredBy(platform="bench", user_id="u")

    async def one(i: int) -> None:
        thread = f"{tag}-{i}"
        started = time.perf_counter()
        out = await agent.run_turn(thread, ASKING_TEXT if asking else PLAIN_TEXT)
        phase.latencies.append(time.perf_counter() - started)
        phase.messages += 1
        if asking:
            assert out.request is not None, "the offline model should have asked"
            response = answer_with_option(out.request, out.request.options[0].id, by)
            started = time.perf_counter()
            await agent.run_turn(thread, answer_message_text(out.request, response), response)
            phase.latencies.append(time.perf_counter() - started)
            phase.messages += 1

    phase.seconds, phase.cpu_seconds = await run_window(n, concurrency, one)
    return phase


async def through_gateway(adapter: ReplyWatcher, n: int, concurrency: int, asking: bool, tag: str) -> Phase:
    """The conversations as users on the test platform: accept, workers, agent, reply."""
    phase = Phase()
    adapter.clear()

    async def one(i: int) -> None:
        chat, user = f"{tag}-{i}", f"u{i}"
        first = adapter.expect(chat, "clarification" if asking else "reply")
        started = time.perf_counter()
        await adapter.say(ASKING_TEXT if asking else PLAIN_TEXT, user=user, chat=chat)
        question = await first
        phase.latencies.append(time.perf_counter() - started)
        phase.messages += 1
        if asking:
            assert isinstance(question, ClarificationOut), question
            reply = adapter.expect(chat, "reply")
            started = time.perf_counter()
            outcome = await adapter.click(0, user=user, token=question.token)
            assert outcome.accepted, outcome
            await reply
            phase.latencies.append(time.perf_counter() - started)
            phase.messages += 1

    phase.seconds, phase.cpu_seconds = await run_window(n, concurrency, one)
    return phase


STORE_METHODS = (
    "thread_for_chat",
    "thread_with_pending",
    "new_thread_for_chat",
    "has_thread",
    "accept_job",
    "forget",
    "first_time",
    "save_pending",
    "get_pending",
    "pending_for_token",
    "pending_for_thread",
    "set_message_ref",
    "claim_answer",
    "read_jobs",
    "claim_stale_jobs",
    "next_seq",
    "complete_job",
    "is_done",
    "keep_jobs",
    "record_delivery",
    "delivery_record",
    "mark_delivered",
    "schedule_thread_cleanup",
)


def count_calls(store: RedisStore, calls: Counter[str]) -> None:
    """Count calls per store method, to show where the round trips go."""
    for name in STORE_METHODS:
        method = getattr(store, name)

        def counted(*args: Any, _method: Any = method, _name: str = name, **kwargs: Any) -> Any:
            calls[_name] += 1
            return _method(*args, **kwargs)

        setattr(store, name, counted)


def agent_settings(checkpointer: str, scratch: str, side: str) -> AgentSettings:
    """The offline model with a ``memory://`` or a fresh SQLite checkpointer for one side."""
    url = "memory://" if checkpointer == "memory" else f"sqlite:///{Path(scratch) / side}.sqlite"
    return AgentSettings(model="offline", checkpointer_url=url, data_dir=scratch)


#: ``--checkpointer``: the kinds measured, one after the other in one run.
CHECKPOINTER_KINDS = {"memory": ["memory"], "sqlite": ["sqlite"], "both": ["sqlite", "memory"]}


async def main(args: argparse.Namespace) -> int:
    """Measure with each checkpointer ``--checkpointer`` names (SQLite, the default, beside
    ``memory://``); with both, a last line compares their CPU per message. 0 when every
    measurement's targets hold, 1 otherwise, 2 when Redis is unreachable."""
    logging.basicConfig(level=logging.WARNING)
    verdicts: list[int] = []
    cpu: dict[str, tuple[float, float]] = {}  # kind: CPU ms per message, agent alone and through the gateway
    for kind in CHECKPOINTER_KINDS[args.checkpointer]:
        measured = await measure(args, kind)
        if measured is None:
            return 2
        verdicts.append(report(args, kind, *measured))
        alone, through = _pooled(a for a, _ in measured[0]), _pooled(g for _, g in measured[0])
        cpu[kind] = (alone.cpu_per_message, through.cpu_per_message)
    if len(cpu) > 1:
        (sqlite_alone, sqlite_through), (memory_alone, memory_through) = cpu["sqlite"], cpu["memory"]
        print(
            f"CPU per message, SQLite (the default checkpointer) beside memory://: through the gateway "
            f"{sqlite_through:.2f} against {memory_through:.2f} ms ({sqlite_through / memory_through:.2f}x), "
            f"the agent alone {sqlite_alone:.2f} against {memory_alone:.2f} ms "
            f"({sqlite_alone / memory_alone:.2f}x)"
        )
    return max(verdicts)


async def measure(
    args: argparse.Namespace, kind: str
) -> tuple[list[tuple[Phase, Phase]], list[float], Counter[str]] | None:
    """Warm up, then measure both paths in ``--rounds`` adjacent pairs with the ``kind``
    checkpointer (None when Redis is unreachable)."""
    prefix = f"bench-{uuid.uuid4().hex[:8]}"
    scratch = tempfile.TemporaryDirectory(prefix="clarigate-bench-")
    store = RedisStore(args.redis_url, prefix)
    if not await store.ping():
        print(f"Redis not reachable at {args.redis_url}", file=sys.stderr)
        await store.close()
        return None
    calls: Counter[str] = Counter()
    count_calls(store, calls)
    # each side gets its own checkpointer of the same kind, so neither reads the other's threads
    runner = LangGraphRunner(agent_settings(kind, scratch.name, "gateway"))
    gateway = Gateway(GatewayConfig(bot_id=prefix, workers=args.workers), store, runner)
    adapter = ReplyWatcher(gateway)
    gateway.register(adapter)
    agent = await ClarifyingAgent.create(agent_settings(kind, scratch.name, "alone"))
    # the agent alone runs as many turns at once as the gateway has workers; the gateway gets more
    # conversations in flight than workers so that its workers never wait for the driver
    alone_width, gateway_width = args.workers, max(args.concurrency, args.workers)
    pairs: list[tuple[Phase, Phase]] = []
    trips: list[float] = []
    try:
        await gateway.start()
        await agent_alone(agent, 10, alone_width, args.asking, "warm")
        await through_gateway(adapter, 10, gateway_width, args.asking, "warm")
        freeze_startup_objects()  # as ``clarigate serve`` does once it has started

        async def alone_block(r: int) -> Phase:
            return await agent_alone(agent, args.n, alone_width, args.asking, f"a{r}")

        async def gateway_block(r: int) -> Phase:
            calls.clear()
            before = store.round_trips
            phase = await through_gateway(adapter, args.n, gateway_width, args.asking, f"g{r}")
            trips.append((store.round_trips - before) / phase.messages)
            return phase

        for r in range(args.rounds):
            # adjacent blocks see the same machine; alternating which goes first cancels drift
            if r % 2 == 0:
                pairs.append((await alone_block(r), await gateway_block(r)))
            else:
                through = await gateway_block(r)
                pairs.append((await alone_block(r), through))
    finally:
        await gateway.stop(grace=5)
        await runner.aclose()
        await agent.aclose()
        await store.close()
        await delete_prefix(args.redis_url, prefix)
        scratch.cleanup()
    return pairs, trips, calls


def report(
    args: argparse.Namespace,
    kind: str,
    pairs: list[tuple[Phase, Phase]],
    trips: list[float],
    calls: Counter[str],
) -> int:
    """Print the figures; 0 when the targets hold, 1 otherwise."""
    alone, through = _pooled(a for a, _ in pairs), _pooled(g for _, g in pairs)
    ratios = sorted(g.rate / a.rate for a, g in pairs)
    cpu_ratios = sorted(a.cpu_per_message / g.cpu_per_message for a, g in pairs)
    ratio, cpu_ratio = statistics.median(ratios), statistics.median(cpu_ratios)
    low, high = _middle_half(ratios)
    per_message = statistics.median(trips)
    what = "2-turn clarification conversations" if args.asking else "single-turn messages"
    print(
        f"{args.n} {what} per block, {args.rounds} pairs of blocks, {args.workers} workers, {args.loop}, "
        f"offline model, {kind} checkpointer, Redis {args.redis_url}"
    )
    for name, phase in (("agent alone", alone), ("through gateway", through)):
        print(
            f"  {name:16} {phase.rate:8.1f} msg/s   p50 {phase.percentile(0.5):6.1f} ms"
            f"   p99 {phase.percentile(0.99):6.1f} ms   CPU {phase.cpu_per_message:5.2f} ms/msg"
            f"   ({phase.messages} msgs in {phase.seconds:.2f} s)"
        )
    spread = f", middle half {low:.2f}-{high:.2f}" if len(ratios) > 1 else ""
    print(
        f"  gateway/agent throughput ratio: {ratio:.2f} (median of {len(ratios)} pairs{spread};"
        f" target >= {MIN_RATIO}); by CPU per message: {cpu_ratio:.2f}"
    )
    print(f"  Redis round trips per inbound message: {per_message:.2f} (target <= {MAX_ROUND_TRIPS})")
    messages = pairs[-1][1].messages
    print(
        "  store calls per message (last block): "
        + ", ".join(f"{name} {n / messages:.2f}" for name, n in calls.most_common())
    )
    throughput_ok, trips_ok = ratio >= MIN_RATIO, per_message <= MAX_ROUND_TRIPS
    print(
        f"  targets {'HOLD' if throughput_ok and trips_ok else 'MISSED'}: "
        f"throughput {'ok' if throughput_ok else 'low'}, round trips {'ok' if trips_ok else 'high'}"
    )
    return 0 if throughput_ok and trips_ok else 1


def _pooled(phases: Iterable[Phase]) -> Phase:
    """One phase summing blocks: messages, seconds, CPU, every latency."""
    pooled = Phase()
    for phase in phases:
        pooled.messages += phase.messages
        pooled.seconds += phase.seconds
        pooled.cpu_seconds += phase.cpu_seconds
        pooled.latencies.extend(phase.latencies)
    return pooled


def _middle_half(ordered: list[float]) -> tuple[float, float]:
    """The first and third quartiles of sorted values."""
    if len(ordered) < 2:
        return ordered[0], ordered[0]
    q1, _, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
    return q1, q3


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=200, help="conversations per block (default 200)")
    parser.add_argument(
        "--rounds",
        type=int,
        default=10,
        help="pairs of blocks: the agent alone, then through the gateway (default 10)",
    )
    parser.add_argument(
        "--concurrency",
        type=int,
        default=8,
        help="conversations in flight through the gateway (the agent alone runs --workers at once)",
    )
    parser.add_argument("--workers", type=int, default=4, help="gateway stream workers")
    parser.add_argument(
        "--asking",
        action="store_true",
        help="2-turn clarification conversations (question, click, reply), not plain messages",
    )
    parser.add_argument(
        "--checkpointer",
        choices=list(CHECKPOINTER_KINDS),
        default="both",
        help="checkpointer of both sides: memory://, SQLite (the default of serve), or both one after "
        "the other (default both)",
    )
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/15")
    parser.add_argument(
        "--loop",
        choices=["uvloop", "asyncio"],
        default="uvloop",
        help="event loop (uvloop, as under uvicorn's standard extras, when installed)",
    )
    return parser.parse_args(argv)


def run(args: argparse.Namespace) -> int:
    """Run the benchmark on the chosen event loop."""
    if args.loop == "uvloop":
        try:
            import uvloop

            return uvloop.run(main(args))
        except ImportError:
            args.loop = "asyncio"
    return asyncio.run(main(args))


if __name__ == "__main__":
    sys.exit(run(parse_args()))
