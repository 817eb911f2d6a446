"""``/readyz`` on a replica serving several platforms: ready while at least one platform works and
the store answers, naming each platform still starting or failed (``PlatformAdapter.still_starting``)
in the ready answer; not ready (503) when none works, or when the store does not answer. The rule
is the same for every platform. The store is the tests' real Redis (cut through a proxy).
"""

from __future__ import annotations

import httpx
import pytest

from clarigate.adapters.testing import ScriptedRunner, TestAdapter
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.runtime.processes import WorkerGroup, WorkerProcess
from clarigate.gateway.web.server import build_app
from tests.conftest import RedisStoreFactory, config_for_tests

from ..tcp_proxy import OutageProxy

STARTING = "starting (its API did not answer, asked again)"
FAILED = "failed (its credentials were refused)"
DEGRADED = "degraded (its API does not answer; what it needs was kept from before)"


class Platform(TestAdapter):
    """A platform named ``name`` whose start says ``state`` (None: working)."""

    def __init__(self, gateway: Gateway, name: str, state: str | None) -> None:
        super().__init__(gateway)
        self.platform = name  # type: ignore[misc]
        self.state = state

    def still_starting(self) -> str | None:
        return self.state


def replica(store, states: dict[str, str | None]) -> tuple[Gateway, httpx.AsyncClient]:
    gateway = Gateway(config_for_tests(), store, ScriptedRunner())
    for name, state in states.items():
        gateway.register(Platform(gateway, name, state))
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=build_app(gateway)), base_url="http://gw")
    return gateway, http


@pytest.mark.parametrize(
    ("states", "named"),
    [
        ({"slack": STARTING, "telegram": None}, {"starting": {"slack": STARTING}}),
        ({"slack": None, "telegram": "starting"}, {"starting": {"telegram": "starting"}}),
        ({"feishu": STARTING, "slack": None}, {"starting": {"feishu": STARTING}}),
        (
            {"slack": STARTING, "telegram": FAILED, "feishu": None},
            {"starting": {"slack": STARTING}, "failed": {"telegram": FAILED}},
        ),
        ({"feishu": DEGRADED}, {"degraded": {"feishu": DEGRADED}}),
        (
            {"feishu": DEGRADED, "slack": FAILED},
            {"degraded": {"feishu": DEGRADED}, "failed": {"slack": FAILED}},
        ),
    ],
    ids=[
        "slack starting",
        "telegram starting",
        "feishu starting",
        "one starting one failed",
        "one platform degraded",
        "one degraded one failed",
    ],
)
async def test_a_replica_with_a_working_platform_is_ready_and_names_the_others(
    redis_stores: RedisStoreFactory, states, named
):
    _, http = replica(redis_stores(), states)
    async with http:
        response = await http.get("/readyz")
    assert response.status_code == 200, response.text
    assert response.json() == {"status": "ready", **named}


@pytest.mark.parametrize(
    ("states", "named"),
    [
        (
            {"slack": STARTING, "telegram": "starting"},
            {"starting": {"slack": STARTING, "telegram": "starting"}},
        ),
        (
            {"slack": STARTING, "feishu": FAILED},
            {"starting": {"slack": STARTING}, "failed": {"feishu": FAILED}},
        ),
        ({"telegram": "starting"}, {"starting": {"telegram": "starting"}}),
        ({"feishu": FAILED}, {"failed": {"feishu": FAILED}}),
    ],
    ids=["all starting", "one starting one failed", "one platform starting", "one platform failed"],
)
async def test_a_replica_with_no_working_platform_is_not_ready(
    redis_stores: RedisStoreFactory, states, named
):
    """The 503 names a platform merely starting under ``starting``, not ``failed``."""
    _, http = replica(redis_stores(), states)
    async with http:
        response = await http.get("/readyz")
    assert response.status_code == 503, response.text
    assert response.json() == {"status": "unavailable", **named}


async def test_the_store_down_fails_readiness_whatever_the_platforms(
    redis_stores: RedisStoreFactory, redis_proxy: OutageProxy
):
    store = redis_stores(url=f"redis://127.0.0.1:{redis_proxy.port}/0")
    _, http = replica(store, {"slack": None, "telegram": STARTING})
    async with http:
        assert (await http.get("/readyz")).status_code == 200
        await redis_proxy.cut()
        response = await http.get("/readyz")
    assert response.status_code == 503, response.text
    assert response.json() == {
        "status": "unavailable",
        "failed": {"store": "unreachable"},
        "starting": {"telegram": STARTING},
    }


async def test_the_store_down_names_a_degraded_platform_as_degraded(
    redis_stores: RedisStoreFactory, redis_proxy: OutageProxy
):
    store = redis_stores(url=f"redis://127.0.0.1:{redis_proxy.port}/0")
    _, http = replica(store, {"feishu": DEGRADED})
    async with http:
        await redis_proxy.cut()
        response = await http.get("/readyz")
    assert response.status_code == 503, response.text
    assert response.json() == {
        "status": "unavailable",
        "failed": {"store": "unreachable"},
        "degraded": {"feishu": DEGRADED},
    }


def worker_answering(app) -> WorkerProcess:
    """A started worker process whose ``/readyz`` is ``app``'s (as ``serve`` asks it)."""
    worker = WorkerProcess([])
    worker.started = True
    worker._http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://worker")
    return worker


@pytest.mark.parametrize(
    ("ping", "named"),
    [
        (True, {"starting": {"worker 1": "starting", "worker 2: feishu": STARTING}}),
        (
            False,
            {
                "starting": {"worker 1": "starting", "worker 2: feishu": STARTING},
                "failed": {"worker 2: checkpointer": "unreachable"},
            },
        ),
    ],
    ids=["workers starting", "a worker's checkpointer down"],
)
async def test_the_replicas_answer_names_worker_processes_starting_apart_from_what_failed(
    redis_stores: RedisStoreFactory, ping, named
):
    """The web process's 503 while its worker processes start (the first not started yet, the
    second still starting Feishu): ``starting``, as each worker process's own answer said it."""
    runner = ScriptedRunner()
    runner.healthy = ping
    own = Gateway(config_for_tests(), redis_stores(), runner)
    own.register(Platform(own, "feishu", STARTING))
    workers = WorkerGroup([], 2, 4)
    workers.processes[1] = worker_answering(build_app(own, webhooks=False))
    web, _ = replica(redis_stores(), {"slack": None})
    http = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=build_app(web, worker=workers)), base_url="http://gw"
    )
    async with http, workers.processes[1]._http:
        response = await http.get("/readyz")
    assert response.status_code == 503, response.text
    assert response.json() == {"status": "unavailable", **named}
