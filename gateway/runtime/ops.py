"""What the on-call reads: the sampled gauges, the liveness verdict, the bot-labelled exposition.

``OpsSampler`` runs beside the workers of a served bot: every ``interval`` seconds it sets the
stream backlog, the open clarifications by age, jobs in flight, worker-loop and platform
connection gauges. (Stream consumers long dead are removed by each worker's upkeep,
``clarigate.gateway.jobs.upkeep``.)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Iterator
from typing import Any

from prometheus_client import REGISTRY, CollectorRegistry, generate_latest, multiprocess
from prometheus_client.metrics_core import Metric

from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.runtime import metrics
from clarigate.gateway.runtime.processes import METRICS_DIR_VARIABLE

log = logging.getLogger(__name__)

#: Age buckets of open clarifications (label ``age``), upper bounds in seconds.
PENDING_AGES = (("lt_1h", 3600.0), ("1h_to_1d", 86400.0), ("gt_1d", float("inf")))


async def liveness_problems(gateway: Gateway) -> dict[str, str]:
    """What makes ``/healthz`` fail: a dead worker loop, a receiver that is down."""
    problems = {name: "dead" for name in gateway.pool.dead_loops()}
    for adapter in gateway.adapters:
        try:
            up = await asyncio.wait_for(adapter.connection_up(), 2)
        except Exception:
            up = False
        if up is False:
            problems[adapter.platform] = "receiver down"
    return problems


class OpsSampler:
    """Sets the sampled gauges of one gateway; with ``redis_url``, also reads its stream and records."""

    def __init__(self, gateway: Gateway, redis_url: str | None, interval: float = 15.0) -> None:
        self.gateway = gateway
        self.redis_url = redis_url
        self.interval = interval
        self._task: asyncio.Task[None] | None = None
        self._admin: Any = None

    def start(self) -> None:
        """Sample now and every ``interval`` seconds until ``stop``."""
        self._task = asyncio.create_task(self._loop(), name="ops-sampler")

    async def stop(self) -> None:
        """Stop sampling and close the Redis connection."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._admin is not None:
            await self._admin.__aexit__(None, None, None)
            self._admin = None

    async def _loop(self) -> None:
        failing = False
        while True:
            try:
                await self.sample_once()
                if failing:
                    log.info("sampling the store for metrics works again")
                failing = False
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                metrics.STORE_ERRORS.labels(operation="sample").inc()
                if not failing:
                    log.warning("sampling the store for metrics failed (%s); retrying", exc)
                failing = True
            await asyncio.sleep(self.interval)

    async def sample_once(self) -> None:
        """Set every sampled gauge once (a process that runs no jobs: its receivers' gauges only,
        the worker process beside it sets the others)."""
        for adapter in self.gateway.adapters:
            up = await adapter.connection_up()
            if up is not None:
                metrics.PLATFORM_CONNECTED.labels(platform=adapter.platform).set(1 if up else 0)
        if not self.gateway.runs_jobs:
            return
        pool = self.gateway.pool
        metrics.JOBS_IN_FLIGHT.set(pool.busy)
        dead = set(pool.dead_loops())
        for loop, health in (
            ("read-jobs", pool.reading),
            ("claim-stale", pool.claiming),
            ("touch-held", pool.keeping),
        ):
            metrics.WORKER_LOOP_UP.labels(loop=loop).set(0 if health.failing or loop in dead else 1)
        if self.redis_url:
            await self._sample_store()

    async def _sample_store(self) -> None:
        from clarigate.gateway.cli.admin_store import Admin

        if self._admin is None:
            config = self.gateway.config.model_copy(update={"redis_url": self.redis_url})
            self._admin = Admin(config)
        # a fixed number of commands, however many jobs and records the store holds
        backlog = await self._admin.backlog(held_jobs=False)
        metrics.STREAM_BACKLOG.set(backlog["waiting"])
        metrics.STREAM_PENDING.set(backlog["pending"])
        metrics.STREAM_OLDEST_SECONDS.set(backlog["oldest_age_seconds"])
        counts = await self._admin.open_by_age([bound for _, bound in PENDING_AGES])
        for (name, _), count in zip(PENDING_AGES, counts, strict=True):
            metrics.PENDING_CLARIFICATIONS.labels(age=name).set(count)


class _BotLabelled:
    """A view of a registry whose every sample carries ``bot=<bot id>`` (unless it has one)."""

    def __init__(self, bot: str, registry: Any) -> None:
        self.bot = bot
        self.registry = registry

    def collect(self) -> Iterator[Metric]:
        for family in self.registry.collect():
            labelled = Metric(family.name, family.documentation, family.type, family.unit)
            for sample in family.samples:
                labels = sample.labels if "bot" in sample.labels else {"bot": self.bot, **sample.labels}
                labelled.add_sample(sample.name, labels, sample.value, sample.timestamp, sample.exemplar)
            yield labelled


def exposition(bot: str) -> bytes:
    """The Prometheus text exposition of every series, each with the ``bot`` label.

    Under ``serve`` with worker processes (``PROMETHEUS_MULTIPROC_DIR``, see
    ``processes.prepare_metrics_directory``) it is the whole replica's: prometheus-client adds
    up every process's counters and histograms and takes each gauge's largest live value, as
    each metric's ``multiprocess_mode`` says.
    """
    if not os.environ.get(METRICS_DIR_VARIABLE):
        return generate_latest(_BotLabelled(bot, REGISTRY))  # type: ignore[arg-type]
    replica = CollectorRegistry()
    multiprocess.MultiProcessCollector(replica)
    return generate_latest(_BotLabelled(bot, _Described(replica)))  # type: ignore[arg-type]


class _Described:
    """The replica's families, and every other family defined here described without samples
    (no process has counted it yet), so that every series is described from the start."""

    def __init__(self, replica: CollectorRegistry) -> None:
        self.replica = replica

    def collect(self) -> Iterator[Metric]:
        seen = set()
        for family in self.replica.collect():
            seen.add(family.name)
            yield family
        for family in REGISTRY.collect():
            if family.name not in seen:
                yield Metric(family.name, family.documentation, family.type, family.unit)
