"""The same conversations through the in-process runner and the LangGraph server runner.

Starts a real LangGraph server (``langgraph dev``, the in-memory runtime) serving the tests'
``asker`` graph (clarigate's harness with the scripted model: a question, then an answer),
then runs ``--n`` two-turn conversations (a message that asks, a click that answers) through
the whole core (in-memory store, test adapter) once with the agent in process
(``memory://`` checkpointer) and once with the agent on the server. Prints, side by side,
the turn latency (accept to reply, p50/p99), the gateway process's own CPU per inbound
message (the server's CPU is not in it), and the latency the server adds per turn.

    python bench/server_runner.py --n 40
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from clarigate.adapters.testing import TestAdapter  # noqa: E402
from clarigate.agent.harness import AgentSettings  # noqa: E402
from clarigate.agent.settings import AgentOptions  # noqa: E402
from clarigate.gateway.flow.intake import Gateway  # noqa: E402
from clarigate.gateway.runners.base import AgentRunner  # noqa: E402
from clarigate.gateway.runners.in_process import LangGraphRunner  # noqa: E402
from clarigate.gateway.runners.server import LangGraphServerRunner  # noqa: E402
from clarigate.gateway.runtime.config import GatewayConfig  # noqa: E402
from clarigate.gateway.store.memory import MemoryStore  # noqa: E402
from tests.gateway.langgraph_server.process import LangGraphServer  # noqa: E402


@dataclass
class Result:
    """One runner's figures."""

    name: str
    turn_latencies: list[float] = field(default_factory=list)  # seconds, accept to reply
    cpu_seconds: float = 0.0
    messages: int = 0

    def p(self, q: float) -> float:
        """The ``q`` quantile of the turn latency, in milliseconds."""
        ordered = sorted(self.turn_latencies)
        return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0

    @property
    def cpu_per_message_ms(self) -> float:
        """This process's CPU per inbound message, in milliseconds."""
        return 1000 * self.cpu_seconds / self.messages if self.messages else 0.0


async def _wait_for(gateway: Gateway) -> None:
    await gateway.drain(timeout=120)


async def conversations(name: str, runner: AgentRunner, n: int, concurrency: int) -> Result:
    """``n`` conversations of two turns each, ``concurrency`` at a time, on a fresh gateway."""
    config = GatewayConfig(workers=max(concurrency, 1), progress_after_seconds=60.0)
    gateway = Gateway(config, MemoryStore(f"bench-{name}"), runner)
    chat = TestAdapter(gateway)
    gateway.register(chat)
    await gateway.start()
    result = Result(name)
    limit = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with limit:
            started = time.perf_counter()
            await chat.say("set up storage", chat=f"c{i}", user=f"u{i}")
            question = await _question_in(chat, f"c{i}")
            result.turn_latencies.append(time.perf_counter() - started)
            started = time.perf_counter()
            await chat.click(0, user=f"u{i}", token=question)
            await _reply_in(chat, f"c{i}")
            result.turn_latencies.append(time.perf_counter() - started)

    cpu = time.process_time()
    await asyncio.gather(*(one(i) for i in range(n)))
    result.cpu_seconds = time.process_time() - cpu
    result.messages = 2 * n
    await gateway.stop(grace=5)
    await runner.aclose()
    return result


async def server_alone(url: str, n: int, concurrency: int) -> Result:
    """The same two turns straight to the server (``runs.wait``): the server's own time per turn."""
    from langgraph_sdk import get_client

    client = get_client(url=url, api_key=None)
    result = Result("server alone")
    limit = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with limit:
            thread = await client.threads.create()
            for text in ("set up storage", "PostgreSQL"):
                started = time.perf_counter()
                message = {"type": "human", "content": text}
                await client.runs.wait(thread["thread_id"], "asker", input={"messages": [message]})
                result.turn_latencies.append(time.perf_counter() - started)

    cpu = time.process_time()
    await asyncio.gather(*(one() for _ in range(n)))
    result.cpu_seconds, result.messages = time.process_time() - cpu, 2 * n
    await client.http.client.aclose()
    return result


async def _question_in(chat: TestAdapter, chat_id: str) -> str:
    while True:
        for conv, item in reversed(chat.sent):
            if conv.chat_id == chat_id and item.kind == "clarification":
                return item.token  # type: ignore[union-attr]
        await asyncio.sleep(0.002)


async def _reply_in(chat: TestAdapter, chat_id: str) -> None:
    while not chat.texts(chat_id):  # noqa: ASYNC110 (the test adapter records; nothing to wait on)
        await asyncio.sleep(0.002)


async def main(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.WARNING)
    with tempfile.TemporaryDirectory() as scratch:
        server = LangGraphServer(Path(scratch))
        server.start()
        try:
            script = Path(scratch) / "asker.yaml"
            results = []
            for _ in range(args.rounds):  # alternate, so drift on a shared machine hits both
                local = LangGraphRunner(
                    AgentSettings(model=f"scripted:{script}", checkpointer_url="memory://")
                )
                results.append(await conversations("in-process", local, args.n, args.concurrency))
                remote = LangGraphServerRunner(AgentOptions(server_url=server.url, assistant_id="asker"))
                results.append(await conversations("server", remote, args.n, args.concurrency))
                results.append(await server_alone(server.url, args.n, args.concurrency))
        finally:
            server.stop()
    report(results)
    return 0


def report(results: list[Result]) -> None:
    """Print the figures of each runner, pooled over rounds, and what the server adds."""
    pooled: dict[str, Result] = {}
    for r in results:
        into = pooled.setdefault(r.name, Result(r.name))
        into.turn_latencies += r.turn_latencies
        into.cpu_seconds += r.cpu_seconds
        into.messages += r.messages
    print(f"{'runner':<12} {'turns':>6} {'p50 ms':>8} {'p99 ms':>8} {'gateway CPU ms/msg':>19}")
    for r in pooled.values():
        figures = f"{r.p(0.5):>8.1f} {r.p(0.99):>8.1f} {r.cpu_per_message_ms:>19.2f}"
        print(f"{r.name:<12} {len(r.turn_latencies):>6} {figures}")
    local, remote, alone = pooled["in-process"], pooled["server"], pooled["server alone"]
    added = statistics.median(remote.turn_latencies) - statistics.median(local.turn_latencies)
    print(f"added per turn by the server runner over in-process (p50): {1000 * added:.1f} ms")
    ours = statistics.median(remote.turn_latencies) - statistics.median(alone.turn_latencies)
    print(f"added per turn by the gateway over the server alone (p50): {1000 * ours:.1f} ms")
    ratio = remote.cpu_per_message_ms / local.cpu_per_message_ms
    print(f"gateway CPU per message, server runner / in-process (agent CPU included there): {ratio:.2f}x")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=40, help="conversations per runner and round")
    parser.add_argument("--concurrency", type=int, default=8, help="conversations in flight at once")
    parser.add_argument("--rounds", type=int, default=2, help="alternating rounds per runner")
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(asyncio.run(main(parse_args())))
