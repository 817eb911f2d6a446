"""Streaming: how soon a streamed answer shows, and what it costs in platform calls, per platform.

For each platform: the real adapter (its SDK) against the tests' fake platform API, the real core
(in process, embedded store), and the in-process LangGraph agent with the scripted model writing
``--tokens`` pieces ``--token-delay`` seconds apart after ``--think`` seconds. ``--conversations``
people write at once, each in a conversation of their own, through the platform's real receive
path (a signed Slack event, a Telegram webhook update, a Feishu event).

Printed per platform:

- *first token → first call showing it*: from the moment the model's first piece reached the
  core to the fake API's arrival of the first call that carries it, p50 / p90 / max;
- *calls per 1,000 tokens*: the platform calls that changed the run's live message or posted its
  reply, per 1,000 streamed pieces, p50 / max; with the run's length, so calls can be read against
  time (the adapter's interval) rather than tokens;
- *answers*: how many runs ended with the whole answer shown;
- *CPU per token*: the process's user+system CPU (``resource.getrusage``, not wall-clock: the
  machine is shared) from the first message sent to the last run drained, per streamed piece;
  beside it *the agent alone*: the same model, pieces and runs at once through the agent's own
  ``run_turn`` with a sink that drops the events (LangGraph's streaming included), measured in the
  same run, and the ratio of the two. Both after a warm-up and with the objects made so far
  frozen out of the garbage collector's sight, as ``clarigate serve`` does once started (else a
  full collection, 0.1 s, 0.25 s with lark-oapi's ~300,000 objects, lands in one run and not
  the next, and walks objects serve never makes it walk). The fake
  platform API shares the process: Feishu's (its own threads) is left out; Slack's and
  Telegram's (on the same event loop) are in the serve figure, an upper bound (they answer a
  few dozen calls per 1,000 tokens).

What it leaves out: the network and the platform's own latency (loopback fakes), TLS, Redis
(embedded store), more than one replica. The load and the fakes share the machine's cores.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import resource
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from clarigate.agent.events import TextDelta  # noqa: E402
from clarigate.agent.harness import AgentSettings, ClarifyingAgent, TurnOutput  # noqa: E402
from clarigate.gateway.flow.intake import Gateway  # noqa: E402
from clarigate.gateway.runners.base import AgentRunner, RunInput  # noqa: E402
from clarigate.gateway.runners.usage import count_inline  # noqa: E402
from clarigate.gateway.runtime.app import freeze_startup_objects  # noqa: E402
from clarigate.gateway.runtime.config import GatewayConfig  # noqa: E402
from clarigate.gateway.store.memory import MemoryStore  # noqa: E402
from clarigate.gateway.web.server import build_app  # noqa: E402


@dataclass
class TimedAgent(AgentRunner):
    """The agent as the core's runner, noting when each message's first streamed piece came."""

    agent: ClarifyingAgent
    first_token: dict[str, float] = field(default_factory=dict)  # the person's text -> monotonic

    async def run_turn(self, run: RunInput) -> TurnOutput:
        marker = run.text.strip()

        async def timed(event: Any) -> None:
            if isinstance(event, TextDelta):
                self.first_token.setdefault(marker, time.monotonic())
            if run.on_event is not None:
                await run.on_event(event)

        return await self.agent.run_turn(
            run.thread_id,
            run.text,
            run.response,
            images=run.images,
            metadata=run.metadata,
            turn_id=run.inbound_id,
            on_event=timed,
        )

    async def ping(self) -> bool:
        return await self.agent.ping()

    async def aclose(self) -> None:
        await self.agent.aclose()


@dataclass
class Call:
    """A call the fake platform API received."""

    at: float
    method: str
    body: str  # its parameters as JSON, to find a conversation's marker and chat in


@dataclass
class World:
    """One platform: send a person's message in conversation ``index``, read the calls made."""

    name: str
    send: Callable[[int, str], Awaitable[None]]
    calls: Callable[[], list[Call]]
    chat_of: Callable[[int], str]  # a string found in every call about conversation ``index``
    gateway: Gateway
    # more strings that name conversation ``index``'s messages (Feishu's card ids), after the run
    also: Callable[[int, str], list[str]] = lambda index, marker: []
    # CPU seconds the fake API spent so far where it can be told apart (its own threads)
    fake_cpu: Callable[[], float] = lambda: 0.0


# --- the platforms ------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def slack_world(runner: Any, config: GatewayConfig) -> AsyncIterator[World]:
    """Slack: channel mentions (each its own channel), answered in their threads by Slack's stream."""
    from pydantic import SecretStr

    from clarigate.adapters.slack import SlackAdapter
    from clarigate.adapters.slack.settings import SlackSettings
    from tests.adapters.slack.fake_slack import BOT_TOKEN, FakeSlack
    from tests.adapters.slack.slack_user import SIGNING_SECRET, SlackUser

    fake = FakeSlack()
    await fake.start()
    gateway = Gateway(config, MemoryStore(f"bench-{uuid.uuid4().hex[:8]}"), runner)
    settings = SlackSettings(
        bot_token=SecretStr(BOT_TOKEN), signing_secret=SecretStr(SIGNING_SECRET), api_url=fake.api_url
    )
    adapter = SlackAdapter(settings, gateway)
    gateway.register(adapter)
    await gateway.start()
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=build_app(gateway)), base_url="http://gateway")
    user = SlackUser(http, fake)

    async def send(index: int, text: str) -> None:
        await user.mention(text, user=f"U{index}", channel=f"C{index}")

    def calls() -> list[Call]:
        return [Call(c.at, c.method, json.dumps(c.params)) for c in fake.calls if c.answer.get("ok")]

    try:
        yield World("slack", send, calls, lambda i: f'"channel": "C{i}"', gateway)
    finally:
        await http.aclose()
        await gateway.stop(grace=1)
        await fake.stop()


@contextlib.asynccontextmanager
async def telegram_world(runner: Any, config: GatewayConfig) -> AsyncIterator[World]:
    """Telegram: private chats (each person their own), answered by a streamed draft."""
    from starlette.applications import Starlette

    from clarigate.adapters.telegram import TelegramAdapter
    from tests.adapters.telegram.fake_bot_api import FakeBotApi
    from tests.adapters.telegram.harness import SECRET, message_update, telegram_settings

    api = FakeBotApi()
    await api.start()
    gateway = Gateway(config, MemoryStore(f"bench-{uuid.uuid4().hex[:8]}"), runner)
    adapter = TelegramAdapter(telegram_settings(api), gateway)
    gateway.register(adapter)
    await gateway.start()
    app = Starlette(routes=adapter.routes())
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gateway")

    def person(index: int) -> dict[str, Any]:
        return {"id": 7_000_000 + index, "is_bot": False, "first_name": f"P{index}"}

    async def send(index: int, text: str) -> None:
        headers = {"X-Telegram-Bot-Api-Secret-Token": SECRET}
        await http.post("/telegram/webhook", json=message_update(text, person(index)), headers=headers)

    def calls() -> list[Call]:
        return [Call(c.at, c.method, json.dumps(c.params, default=str)) for c in api.calls]

    try:
        yield World("telegram", send, calls, lambda i: str(7_000_000 + i), gateway)
    finally:
        await http.aclose()
        await gateway.stop(grace=1)
        await api.stop()


@contextlib.asynccontextmanager
async def feishu_world(runner: Any, config: GatewayConfig) -> AsyncIterator[World]:
    """Feishu: direct chats (each person their own), answered by a CardKit streaming card."""
    from starlette.applications import Starlette

    from clarigate.adapters.feishu import FeishuAdapter
    from tests.adapters.feishu.conftest import feishu_settings
    from tests.adapters.feishu.events import message_event, signed
    from tests.adapters.feishu.fake_open_api import FakeOpenApi

    api = FakeOpenApi()
    spent = [0.0]  # CPU of the fake's connection threads: Feishu's servers, not the replica
    serving: Any = api._server.RequestHandlerClass

    class Timed(serving):  # type: ignore[misc,valid-type]
        def handle(self) -> None:
            before = time.thread_time()
            try:
                super().handle()
            finally:
                spent[0] += time.thread_time() - before

    api._server.RequestHandlerClass = Timed
    api.start()
    gateway = Gateway(config, MemoryStore(f"bench-{uuid.uuid4().hex[:8]}"), runner)
    adapter = FeishuAdapter(feishu_settings(api), gateway)
    gateway.register(adapter)
    await gateway.start()
    await adapter.startup.wait()  # lark-oapi loaded, the identity learnt: not counted in the runs
    app = Starlette(routes=adapter.routes())
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gateway")

    async def send(index: int, text: str) -> None:
        body, headers = signed(message_event(text, user=f"ou_p{index}", chat=f"oc_p2p{index}x"))
        await http.post("/feishu/events", content=body, headers=headers)

    def calls() -> list[Call]:
        return [Call(c.at, c.method + " " + c.path, c.path + json.dumps(c.body)) for c in api.calls]

    def cards_of(index: int, marker: str) -> list[str]:
        return [card_id for card_id, entity in api.entities.items() if marker in json.dumps(entity.card)]

    try:
        yield World("feishu", send, calls, lambda i: f"oc_p2p{i}x", gateway, cards_of, lambda: spent[0])
    finally:
        await http.aclose()
        await gateway.stop(grace=1)
        api.close()


PLATFORMS: dict[str, Callable[[Any, GatewayConfig], contextlib.AbstractAsyncContextManager[World]]] = {
    "slack": slack_world,
    "telegram": telegram_world,
    "feishu": feishu_world,
}

#: Calls that make or change what a person reads (not auth checks, names, file downloads).
SHOWING = {
    "chat.postMessage",
    "chat.update",
    "chat.delete",
    "chat.startStream",
    "chat.appendStream",
    "chat.stopStream",
    "sendMessage",
    "sendMessageDraft",
    "editMessageText",
    "deleteMessage",
    "sendChatAction",
}


def showing(method: str) -> bool:
    """A call that makes or changes what a person reads (Feishu's: messages and CardKit cards)."""
    if method.startswith(("POST /open-apis/im/", "PATCH /open-apis/im/", "PUT /open-apis/im/")):
        return "/resources/" not in method
    return method in SHOWING or "/cardkit/" in method or method.startswith("DELETE /open-apis/im/")


# --- the run -------------------------------------------------------------------------------------


def script(tokens: int, delay: float, think: float) -> list[dict[str, Any]]:
    """One turn: the person's text first (the marker), then ``tokens - 1`` words."""
    words = " ".join(f"w{i}" for i in range(tokens - 1))
    return [{"content": "{last_user} " + words, "token_delay_seconds": delay, "delay_seconds": think}]


def cpu_seconds() -> float:
    """User+system CPU of this process (every thread) so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def agent_alone(args: argparse.Namespace, workdir: Path) -> float:
    """CPU seconds per streamed piece of the agent alone: the same turns, at once, events dropped."""
    path = workdir / "alone.yaml"
    path.write_text(yaml.safe_dump(script(args.tokens, args.token_delay, args.think)))
    settings = AgentSettings(model=f"scripted:{path}", checkpointer_url="memory://", data_dir=str(workdir))
    agent = await ClarifyingAgent.create(settings)

    async def dropped(event: Any) -> None:
        return None

    async def turn(index: int, marker: str) -> None:
        await agent.run_turn(f"alone-{marker}", marker, None, on_event=dropped)

    await turn(0, "warm")  # first imports and compiled graph paths
    freeze_startup_objects()  # as ``clarigate serve`` does once it has started
    markers = [f"m{uuid.uuid4().hex[:6]}x{i}" for i in range(args.conversations)]
    before = cpu_seconds()
    await asyncio.gather(*(turn(i, marker) for i, marker in enumerate(markers)))
    used = cpu_seconds() - before
    await agent.aclose()
    return used / (args.tokens * args.conversations)


def quantiles(values: list[float]) -> tuple[float, float, float]:
    ordered = sorted(values)
    if not ordered:
        return (float("nan"),) * 3
    p90 = ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]
    return statistics.median(ordered), p90, ordered[-1]


async def measure(name: str, args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    path = workdir / f"{name}.yaml"
    path.write_text(yaml.safe_dump(script(args.tokens, args.token_delay, args.think)))
    settings = AgentSettings(model=f"scripted:{path}", checkpointer_url="memory://", data_dir=str(workdir))
    runner = TimedAgent(await ClarifyingAgent.create(settings))
    config = GatewayConfig(workers=max(args.conversations, 4))
    async with PLATFORMS[name](runner, config) as world:
        await world.send(args.conversations, "warm")  # first imports, connections, compiled paths
        await world.gateway.drain(timeout=args.tokens * args.token_delay * 4 + args.think + 60)
        freeze_startup_objects()  # as ``clarigate serve`` does once it has started
        markers = [f"m{uuid.uuid4().hex[:6]}x{i}" for i in range(args.conversations)]
        started, cpu_before = time.monotonic(), cpu_seconds() - world.fake_cpu()
        await asyncio.gather(*(world.send(i, marker) for i, marker in enumerate(markers)))
        await world.gateway.drain(timeout=args.tokens * args.token_delay * 4 + args.think + 60)
        took, cpu_used = time.monotonic() - started, cpu_seconds() - world.fake_cpu() - cpu_before
        calls = world.calls()
    await runner.aclose()
    first_shown, per_thousand, answered = [], [], 0
    last_word = f"w{args.tokens - 2}"
    for index, marker in enumerate(markers):
        token_at = runner.first_token.get(marker)
        # the marker too: a call that makes the message before naming its chat (Feishu's card)
        names = [world.chat_of(index), marker, *world.also(index, marker)]
        mine = [c for c in calls if showing(c.method) and any(n in c.body for n in names)]
        if token_at is not None:
            shown = next((c.at for c in mine if c.at >= token_at and marker in c.body), None)
            if shown is not None:
                first_shown.append((shown - token_at) * 1000)
        per_thousand.append(len(mine) * 1000 / args.tokens)
        answered += any(last_word in c.body for c in mine)
    return {
        "platform": name,
        "first_ms": quantiles(first_shown),
        "measured": len(first_shown),
        "calls": quantiles(per_thousand),
        "answered": answered,
        "took": took,
        "cpu_per_token": cpu_used / (args.tokens * args.conversations),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--platforms", default=",".join(PLATFORMS))
    parser.add_argument("--conversations", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=1000)
    parser.add_argument("--token-delay", type=float, default=0.01, help="seconds between streamed pieces")
    parser.add_argument("--think", type=float, default=1.0, help="seconds before the first piece")
    parser.add_argument(
        "--role-all",
        action="store_true",
        help="count model usage through the thread pool, as one process serving acks too does "
        "(``role: all``); by default inline, as serve's worker process does",
    )
    args = parser.parse_args()
    if not args.role_all:
        count_inline()
    run_seconds = args.think + args.tokens * args.token_delay
    print(
        f"{args.conversations} conversations at once per platform, {args.tokens} tokens each, "
        f"{args.token_delay * 1000:.0f} ms apart after {args.think:.1f} s (a run of ~{run_seconds:.1f} s)"
    )
    print(
        f"{'platform':<10} {'first token → first call (ms) p50 / p90 / max':<48} "
        f"{'calls per 1,000 tokens p50 / max':<34} {'answered':<30} CPU per token: serve / agent alone"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.platforms.split(","):
            result = asyncio.run(measure(name.strip(), args, Path(tmp)))
            alone = asyncio.run(agent_alone(args, Path(tmp)))  # the baseline, right after
            p50, p90, top = result["first_ms"]
            c50, _, ctop = result["calls"]
            serve = result["cpu_per_token"]
            print(
                f"{name:<10} {p50:7.0f} / {p90:5.0f} / {top:5.0f}  (of {result['measured']})"
                f"{'':<17} {c50:6.1f} / {ctop:5.1f}{'':<19} "
                f"{result['answered']}/{args.conversations}  (all done in {result['took']:.1f} s)"
                f"{'':<4} {serve * 1000:.3f} / {alone * 1000:.3f} ms = {serve / alone:.2f}×",
                flush=True,
            )


if __name__ == "__main__":
    main()
