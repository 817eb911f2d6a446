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
    "states",
    [
        {"slack": STARTING, "telegram": "starting"},
        {"slack": STARTING, "feishu": FAILED},
        {"telegram": "starting"},
    ],
    ids=["all starting", "one starting one failed", "one platform starting"],
)
async def test_a_replica_with_no_working_platform_is_not_ready(redis_stores: RedisStoreFactory, states):
    _, http = replica(redis_stores(), states)
    async with http:
        response = await http.get("/readyz")
    assert response.status_code == 503, response.text
    assert response.json() == {"status": "unavailable", "failed": states}


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
    assert response.json()["failed"] == {"store": "unreachable", "telegram": STARTING}
