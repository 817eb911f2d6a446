"""How many worker processes ``worker_processes`` starts, and how ``workers`` is shared among them."""

from __future__ import annotations

import os

import pytest

from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.runtime.processes import (
    AUTO_MAX_WORKER_PROCESSES,
    WorkerGroup,
    usable_cpus,
    worker_process_count,
)
from clarigate.gateway.runtime.supervise import DEATH_LIMIT, DEATH_WINDOW_SECONDS, Deaths


def affinity() -> int:
    return len(os.sched_getaffinity(0))


def test_a_container_cpu_limit_lowers_the_cores_counted(tmp_path):
    (tmp_path / "cpu.max").write_text("150000 100000\n")  # cgroup v2: 1.5 CPUs
    assert usable_cpus(str(tmp_path)) == min(2, affinity())
    (tmp_path / "cpu.max").write_text("max 100000\n")  # no limit
    assert usable_cpus(str(tmp_path)) == affinity()


def test_a_cgroup_v1_quota_counts_too(tmp_path):
    (tmp_path / "cpu").mkdir()
    (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text("50000\n")  # half a CPU: still one process
    (tmp_path / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    assert usable_cpus(str(tmp_path)) == 1
    (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text("-1\n")
    assert usable_cpus(str(tmp_path)) == affinity()


def test_auto_is_the_usable_cores_at_most_four_and_a_number_is_taken_as_it_is():
    assert worker_process_count("auto") == min(usable_cpus(), AUTO_MAX_WORKER_PROCESSES)
    assert worker_process_count(3) == 3
    assert GatewayConfig().worker_processes == "auto"
    assert GatewayConfig(worker_processes=2).worker_processes == 2
    with pytest.raises(ValueError, match="worker_processes"):
        GatewayConfig(worker_processes=0)
    with pytest.raises(ValueError, match="worker_processes"):
        GatewayConfig(worker_processes="many")


def test_the_runs_in_flight_are_shared_out_and_add_up_to_the_setting():
    group = WorkerGroup([], 3, 256)
    shares = [int(worker.env["CLARIGATE_WORKERS"]) for worker in group.processes]
    assert shares == [86, 85, 85] and sum(shares) == 256
    few = WorkerGroup([], 4, 2)  # fewer runs than processes: each may still run one
    assert [worker.env["CLARIGATE_WORKERS"] for worker in few.processes] == ["1", "1", "1", "1"]


def test_a_dead_worker_process_waits_longer_for_each_recent_death_and_too_many_end_the_replica():
    deaths = Deaths()
    assert [deaths.record(t) for t in (0.0, 1.0, 3.0, 7.0)] == [1.0, 2.0, 4.0, 8.0]
    assert deaths.record(15.0) is None  # DEATH_LIMIT within DEATH_WINDOW_SECONDS
    assert (DEATH_LIMIT, DEATH_WINDOW_SECONDS) == (5, 60.0)


def test_deaths_spread_wider_than_the_limit_never_end_the_replica():
    deaths = Deaths()
    assert [deaths.record(61.0 * n) for n in range(20)] == [1.0] * 20
    two_a_minute = Deaths()  # 4 in any 60 s: still one fewer than the limit
    assert all(two_a_minute.record(15.5 * n) is not None for n in range(40))
