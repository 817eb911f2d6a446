"""The throughput benchmark still runs end to end (its figures are for people, not asserted)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[3] / "bench" / "gateway_throughput.py"


def test_benchmark_runs_both_paths_and_reports_round_trips(redis_url: str) -> None:
    args = ["--n", "4", "--rounds", "1", "--asking", "--loop", "asyncio", "--redis-url", redis_url]
    done = subprocess.run(
        [sys.executable, str(BENCH), *args], capture_output=True, text=True, timeout=90, check=False
    )
    assert done.returncode in (0, 1), done.stderr  # 1: targets missed on a busy machine, still a run
    out = done.stdout
    assert "agent alone" in out and "through gateway" in out
    assert "(8 msgs in" in out  # 4 conversations: question and click each, on both paths
    assert "Redis round trips per inbound message" in out
    assert "claim_answer 0.50" in out  # each click claimed exactly once


def test_the_http_benchmark_answers_every_conversation_through_serve(redis_url: str, tmp_path: Path) -> None:
    bench = BENCH.parent / "http_e2e.py"
    args = ["--conversations", "3", "--rate", "5", "--seconds", "1", "--rounds", "1", "--floor", "20"]
    args += ["--redis-url", redis_url]
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # where its scratch folders go
    done = subprocess.run(
        [sys.executable, str(bench), *args], capture_output=True, text=True, timeout=110, check=False, env=env
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert list(tmp_path.iterdir()) == []  # serve's folder (its model script, its log) removed
    out = done.stdout
    assert "burst 1 after start, not measured" in out and "3/3 answered" in out  # the warming burst
    assert "answered 3/3" in out  # each reply reached the fake Slack, edited into its "Working…"
    assert "chat.postMessage 3, chat.update 3" in out
    assert "clarigate serve" in out and "bare slack-bolt" in out and "(5 requests;" in out
    # the libraries' floor beside the gateway's own CPU, and the budget for 1,000 at once
    # the floor a few calls at once (2 reads for 20), and as many as the burst had in flight
    assert "the libraries' floor, 16 calls at once:" in out and "in 5.10 round trips" in out
    assert "the libraries' floor, 3 calls at once:" in out and "(3 at once)" in out
    assert "the gateway's own / the floor:" in out
    assert "CPU-seconds per message" in out and "1,000 at once within 1.5x" in out
