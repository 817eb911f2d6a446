"""Fixtures shared across test folders: a gateway driven by the in-memory test platform."""

from __future__ import annotations

import os
import signal
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from urllib.parse import urlsplit

import mcp.client.stdio  # noqa: F401 (see below)
import pytest
from redis.asyncio import Redis

from clarigate.adapters.testing import ScriptedRunner, TestAdapter
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.runners.base import AgentRunner
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.store.base import Store
from clarigate.gateway.store.redis import RedisStore

from .gateway.langgraph_server.process import LangGraphServer
from .gateway.tcp_proxy import OutageProxy

# mcp's stdio client binds ``errlog=sys.stderr`` when it is first imported; imported inside a
# test that captures output (capsys), it would keep that test's stream, closed afterwards, and
# every later stdio MCP server would fail with "I/O operation on closed file". Imported here,
# it keeps the session's stderr.

GatewayFactory = Callable[..., Awaitable[tuple[Gateway, TestAdapter]]]


def config_for_tests(**overrides: object) -> GatewayConfig:
    """A config for tests: small stale-claim idle time, a few workers, no environment surprises.

    "working…" shows at once, so that tests see it around runs that take no time at all
    (the delay before it is tested on its own, in tests/gateway/flow/test_progress.py).
    """
    values: dict[str, object] = {
        "workers": 3,
        "stale_claim_seconds": 0.3,
        "shutdown_grace_seconds": 1.0,
        "progress_after_seconds": 0.0,
    }
    values.update(overrides)
    return GatewayConfig(**values)


#: The name other test folders import.
test_config = config_for_tests


@pytest.fixture
async def make_gateway() -> AsyncIterator[GatewayFactory]:
    """Build started gateways (with a ``TestAdapter``) on a given store; all stopped afterwards."""
    started: list[Gateway] = []

    async def build(
        store: Store,
        runner: AgentRunner | None = None,
        *,
        start: bool = True,
        adapter_class: type[TestAdapter] = TestAdapter,
        **config: object,
    ) -> tuple[Gateway, TestAdapter]:
        gateway = Gateway(config_for_tests(**config), store, runner or ScriptedRunner())
        adapter = adapter_class(gateway)
        gateway.register(adapter)
        if start:
            await gateway.start()
        started.append(gateway)
        return gateway, adapter

    yield build
    for gateway in started:
        await gateway.stop(grace=0)


RedisStoreFactory = Callable[..., RedisStore]
#: The real Redis the tests use.
TEST_REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


@pytest.fixture
async def redis_stores() -> AsyncIterator[RedisStoreFactory]:
    """Open ``RedisStore``s on the real Redis (127.0.0.1:6379); every prefix used is deleted afterwards.

    ``redis_stores()`` opens a store under a fresh prefix; ``redis_stores(prefix)`` another one on
    the same prefix (a restarted process, a second replica); ``url=`` reaches the same Redis
    another way (through a proxy).
    """
    url = TEST_REDIS_URL
    opened: list[RedisStore] = []
    prefixes: set[str] = set()

    def open_store(prefix: str | None = None, *, url: str = url) -> RedisStore:
        prefix = prefix or f"test-{uuid.uuid4().hex[:12]}"
        prefixes.add(prefix)
        store = RedisStore(url, prefix)
        opened.append(store)
        return store

    yield open_store
    for store in opened:
        await store.close()
    client = Redis.from_url(url)
    try:
        for prefix in prefixes:
            keys = [key async for key in client.scan_iter(match=f"{prefix}:*", count=500)]
            if keys:
                await client.delete(*keys)
    finally:
        await client.aclose()


@pytest.fixture
async def redis_proxy() -> AsyncIterator[OutageProxy]:
    """A TCP proxy in front of the tests' Redis (``redis_stores(url=f"redis://127.0.0.1:{redis_proxy.port}/0")``),
    cut (``cut()``) and brought back (``restore()``) to make an outage; cut at the end."""
    proxy = OutageProxy(urlsplit(TEST_REDIS_URL).port or 6379)
    await proxy.start()
    yield proxy
    await proxy.cut()


@pytest.fixture(scope="session")
def langgraph_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LangGraphServer]:
    """One real LangGraph server (``langgraph dev``) for the whole run, serving tests' graphs."""
    server = LangGraphServer(tmp_path_factory.mktemp("langgraph"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(autouse=True, scope="session")
def _only_the_clarigate_import_name() -> Iterator[None]:
    """The tests run with the repository on ``sys.path``, where the code folders would import
    as top-level ``agent``, ``gateway`` and ``adapters``; a test or module reaching for one of
    those names (an old import, a string given to monkeypatch) would run a second copy of the
    code. Nothing may: everything is ``clarigate.*``."""
    import sys

    yield
    strays = sorted(name for name in sys.modules if name.split(".")[0] in ("agent", "gateway", "adapters"))
    assert not strays, f"imported outside the clarigate package: {strays}"


@pytest.fixture(autouse=True)
def _forget_identity_claims() -> Iterator[None]:
    """Each test's bot ids are new, its platform identities often the same (the fake Bot API's
    bot 123456): the claims of identities a test made (``serve``'s check at start) go with it, as
    its bot id's keys do, so that the next test's bot id may claim them again."""
    import json
    import time

    import redis

    from clarigate.gateway.runtime.identity import OWNERS_KEY

    started = int(time.time()) - 1
    yield
    try:
        client = redis.Redis.from_url(TEST_REDIS_URL, socket_connect_timeout=1, socket_timeout=1)
        with client:
            claims = client.hgetall(OWNERS_KEY)
            mine = [f for f, v in claims.items() if json.loads(v).get("since", 0) >= started]
            if mine:
                client.hdel(OWNERS_KEY, *mine)
    except redis.RedisError:  # no Redis: no claims either
        pass


@pytest.fixture
def terminal_ctrl_c() -> Iterator[None]:
    """Ctrl-C as a terminal delivers it: Python's own SIGINT handler here, and so the default in a
    process started from here. A shell that starts the tests in the background has SIGINT ignored
    (a chat started from such a process would ignore Ctrl-C too); a debugger's own handler is kept
    and the test skipped."""
    previous = signal.getsignal(signal.SIGINT)
    if previous not in (signal.default_int_handler, signal.SIG_IGN):
        pytest.skip("SIGINT is handled by something else in this process; Ctrl-C cannot be simulated")
    signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)
