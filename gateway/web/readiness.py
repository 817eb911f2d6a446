"""``GET /readyz``: whether this replica should be sent traffic, and what fails if not.

Ready when the store and (where jobs run) the agent answer, each within ``READY_TIMEOUT``, the
worker processes say so too, and at least one configured platform works. A platform that does not
work yet or for now (``PlatformAdapter.still_starting`` saying ``"starting (why)"``: Feishu out of
reach at start, its bot's identity asked again; or ``"failed (why)"``: Feishu refusing the app's
credentials) does not take a replica out of rotation while another one works: the answer stays 200
and names it under what it says (``{"status": "ready", "starting": {"feishu": "starting (…)"}}``,
``{"status": "ready", "failed": {"feishu": "failed (…)"}}``), so the other platforms' webhooks keep
reaching the replica. When no configured platform works, or a dependency does not answer, the
replica is not ready (503), naming each part under what it is, the same way: a part still starting
under ``starting`` (``{"status": "unavailable", "starting": {"worker": "starting"}}``), one that
does not answer or failed under ``failed``, a degraded platform under ``degraded``. A platform
that works although part of it does not answer (``"degraded (why)"``:
Feishu's open API down at start, the bot's identity kept from before used meanwhile) counts as
working: it alone keeps the replica ready, named under ``degraded``. The rule is the same for
every platform and every process (``set_aside``): a worker process answers the web process with
it too.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Collection, Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.runtime import metrics
from clarigate.gateway.runtime.processes import CHECK_SECONDS, WorkerGroup

log = logging.getLogger("clarigate.gateway.web.server")  # where these lines have always been written

#: How long ``/readyz`` waits for each dependency before calling it down (see ``CHECK_SECONDS``).
READY_TIMEOUT = CHECK_SECONDS
#: How ``PlatformAdapter.still_starting`` begins what it says for a platform that cannot work for
#: now (any other answer but None: it is still starting), or works with part of it not answering;
#: the keys of a ready answer naming them.
FAILED = "failed"
STARTING = "starting"
DEGRADED = "degraded"


def readyz(gateway: Gateway, worker: WorkerGroup | None) -> Callable[[Request], Awaitable[Response]]:
    """``GET /readyz``: this process's dependencies asked at the same time as the worker processes'
    own (so the whole answer takes ~2 s at most). A dependency that goes down or comes back is
    logged once, not on every probe."""
    changes = ReadinessLog()

    async def answer(request: Request) -> Response:
        own, asked = await asyncio.gather(
            own_problems(gateway), worker.health_problems("/readyz") if worker else _nothing()
        )
        problems = {**own, **asked}
        aside = set_aside(gateway, own)
        failing = {name: why for name, why in problems.items() if name not in aside}
        # the worker processes log their own dependencies: only whether they answer is noted here
        noted = {**own, **{k: v for k, v in asked.items() if k.startswith("worker")}}
        changes.note({k: v for k, v in noted.items() if k not in aside}, aside)
        platforms = [adapter.platform for adapter in gateway.adapters]
        if failing:
            return JSONResponse({"status": "unavailable", **by_state(problems, platforms)}, status_code=503)
        return JSONResponse({"status": "ready", **by_state(aside, platforms)})

    return answer


def set_aside(gateway: Gateway, own: Mapping[str, str]) -> dict[str, str]:
    """The configured platforms that do not work (still starting, or failed for now) while another
    one works, and those degraded (working): named in a ready answer instead of failing it. None
    when no platform works."""
    platforms = [adapter.platform for adapter in gateway.adapters]
    idle = {name: own[name] for name in platforms if name in own}
    working = [name for name in platforms if name not in idle or idle[name].startswith(DEGRADED)]
    return idle if working else {}


def by_state(parts: Mapping[str, str], platforms: Collection[str]) -> dict[str, dict[str, str]]:
    """``parts`` as an answer names them: under ``starting``, ``degraded`` or ``failed``, by what
    each says it is (``"worker": "starting"``, ``"feishu": "starting (why)"``); anything else
    (``"unreachable"``, ``"not answering"``) is ``failed``, but for one of ``platforms``: a
    platform's other answers mean it is still starting (``PlatformAdapter.still_starting``)."""
    named: dict[str, dict[str, str]] = {}
    for name, why in parts.items():
        other = STARTING if name in platforms else FAILED
        state = next((word for word in (STARTING, FAILED, DEGRADED) if why.startswith(word)), other)
        named.setdefault(state, {})[name] = why
    return named


async def _nothing() -> dict[str, str]:
    return {}


async def own_problems(gateway: Gateway) -> dict[str, str]:
    """This process's dependencies that do not answer within ``READY_TIMEOUT``, each named (the
    agent by what it is: ``checkpointer``, or ``agent_server`` with where it was looked for), and
    the platforms still starting in the background, or failed (``PlatformAdapter.still_starting``)."""
    runner = gateway.runner
    agent = getattr(runner, "ready_name", "checkpointer")
    checks: list[tuple[str, Callable[[], Any]]] = [("store", gateway.store.ping)]
    if gateway.runs_jobs:  # the agent is built where jobs run
        checks.append((agent, runner.ping))
    results = await asyncio.gather(*(_answers(check) for _, check in checks))
    problems = {}
    for (name, _), ok in zip(checks, results, strict=True):
        if ok:
            continue
        where = getattr(runner, "ready_where", None) if name == agent else None
        problems[name] = f"unreachable ({where})" if where else "unreachable"
        if name == "store":
            metrics.STORE_ERRORS.labels(operation="ping").inc()
        else:
            metrics.CHECKPOINTER_ERRORS.inc()
    problems.update({a.platform: why for a in gateway.adapters if (why := a.still_starting())})
    return problems


class ReadinessLog:
    """One log line per change of what ``/readyz`` finds failing, not one per probe."""

    def __init__(self) -> None:
        self.failing: dict[str, str] = {}

    def note(self, problems: dict[str, str], aside: Mapping[str, str] | None = None) -> None:
        """Log what started failing (WARNING; a worker process starting: INFO) and what answers
        again (INFO) since the last probe. A platform ``aside`` (starting or failed, the replica
        ready on the others) is its adapter's to log: it is not said to answer again when it moves
        there."""
        for name, why in problems.items():
            if self.failing.get(name) != why:
                log.log(logging.INFO if why == "starting" else logging.WARNING, "not ready: %s %s", name, why)
        for name in self.failing.keys() - problems.keys() - (aside or {}).keys():
            log.info("ready again: %s answers", name)
        self.failing = dict(problems)


async def _answers(check: Callable[[], Any]) -> bool:
    """True when ``check()`` returns truthy within ``READY_TIMEOUT`` without raising (what failed
    is logged by ``ReadinessLog``, once per change)."""
    try:
        return bool(await asyncio.wait_for(check(), READY_TIMEOUT))
    except Exception as exc:
        log.debug("readiness check failed: %s: %s", type(exc).__name__, exc)
        return False
