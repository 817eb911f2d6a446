"""The HTTP server: body limit, bad requests and failures, health, readiness against a dead Redis,
Prometheus metrics."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import re

import httpx
import pytest
import redis.exceptions
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from clarigate.adapters.testing import ScriptedRunner, TestAdapter, asking, choice_request
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.boundary import outage
from clarigate.gateway.boundary.errors import BadRequest
from clarigate.gateway.store.memory import MemoryStore
from clarigate.gateway.store.redis import RedisStore
from clarigate.gateway.web.server import build_app, gateway_lifespan
from tests.http_errors import (
    http_errors,
    http_unavailable,
    one_bad_request_line,
    one_failure_with_traceback,
    problem_lines,
)


class WebhookAdapter(TestAdapter):
    """A test platform with a webhook that reports how many bytes it read."""

    def routes(self):
        async def hook(request: Request) -> JSONResponse:
            return JSONResponse({"read": len(await request.body())})

        return [Route("/test/events", hook, methods=["POST"])]


def client_for(gateway, limit: int | None = None) -> httpx.AsyncClient:
    app = build_app(gateway, max_body_bytes=limit)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gateway")


async def test_bodies_over_the_limit_get_413_declared_or_streamed(make_gateway):
    gateway, _ = await make_gateway(MemoryStore("t"), start=False, adapter_class=WebhookAdapter)

    async def chunks(n: int, size: int):
        for _ in range(n):
            yield b"x" * size

    async with client_for(gateway) as http:
        small = await http.post("/test/events", content=b"x" * 1000)
        declared = await http.post("/test/events", content=b"x" * (1024 * 1024 + 1))
        streamed = await http.post("/test/events", content=chunks(20, 64 * 1024))  # chunked, no length
        just_fits = await http.post("/test/events", content=chunks(16, 64 * 1024))

    assert small.status_code == 200 and small.json() == {"read": 1000}
    assert declared.status_code == 413
    assert streamed.status_code == 413
    assert just_fits.status_code == 200 and just_fits.json() == {"read": 1024 * 1024}


async def test_healthz_and_readyz_when_everything_answers(make_gateway):
    gateway, _ = await make_gateway(MemoryStore("t"), start=False)
    async with client_for(gateway) as http:
        health = await http.get("/healthz")
        ready = await http.get("/readyz")
    assert health.status_code == 200 and ready.status_code == 200
    assert ready.json() == {"status": "ready"}


async def test_readyz_is_503_and_says_what_failed_when_redis_is_down(make_gateway):
    dead = RedisStore("redis://127.0.0.1:1/0", "unreachable")  # nothing listens on port 1
    runner = ScriptedRunner()
    gateway, _ = await make_gateway(dead, runner, start=False)
    try:
        async with client_for(gateway) as http:
            store_down = await http.get("/readyz")
            runner.healthy = False
            both_down = await http.get("/readyz")
            health = await http.get("/healthz")
    finally:
        await dead.close()
    assert store_down.status_code == 503
    assert store_down.json()["failed"] == {"store": "unreachable"}
    assert both_down.json()["failed"] == {"store": "unreachable", "checkpointer": "unreachable"}
    assert health.status_code == 200  # alive, just not ready


async def test_metrics_count_inbound_events_runs_and_duplicates(make_gateway):
    gateway, chat = await make_gateway(MemoryStore("t"))
    async with client_for(gateway) as http:
        before = parse_metrics((await http.get("/metrics")).text)
        await chat.say("hi", event_id="m-1")
        await chat.say("hi", event_id="m-1")
        await gateway.drain()
        response = await http.get("/metrics")
    after = parse_metrics(response.text)

    def grew(name: str) -> float:
        return after.get(name, 0.0) - before.get(name, 0.0)

    assert response.headers["content-type"].startswith("text/plain")
    assert grew('clarigate_inbound_events_total{kind="message",platform="test"}') == 2
    assert grew('clarigate_duplicates_dropped_total{platform="test"}') == 1
    assert grew('clarigate_runs_total{state="started"}') == 1
    assert grew('clarigate_runs_total{state="finished"}') == 1
    assert grew("clarigate_run_seconds_count") == 1


def parse_metrics(text: str, bot: str = "clarigate") -> dict[str, float]:
    """``{'name{labels}': value}`` from the Prometheus text format, the ``bot`` label checked and left out."""
    values = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            assert f'bot="{bot}"' in name, line  # several bots share one Prometheus
            name = (
                re.sub(r',?bot="[^"]*",?', ",", name).replace("{,", "{").replace(",}", "}").replace("{}", "")
            )
            values[name] = float(value)
    return values


async def test_metrics_count_clarifications_and_failed_runs(make_gateway):
    question = choice_request("Which region?", ["eu", "us"])

    def script(turn):
        if turn.text == "crash":
            raise RuntimeError("model provider down")
        return asking(question) if turn.response is None else TurnOutput(replies=["ok"])

    gateway, chat = await make_gateway(MemoryStore("t"), ScriptedRunner(script))
    async with client_for(gateway) as http:
        before = parse_metrics((await http.get("/metrics")).text)
        await chat.say("deploy")
        await gateway.drain()
        await chat.click(0)
        await chat.click(1, token="no-such-token")  # a question no longer pending
        await gateway.drain()
        await chat.say("crash")
        await gateway.drain()
        after = parse_metrics((await http.get("/metrics")).text)

    def grew(name: str) -> float:
        return after.get(name, 0.0) - before.get(name, 0.0)

    assert grew('clarigate_clarifications_total{state="asked"}') == 1
    assert grew('clarigate_clarifications_total{state="answered"}') == 1
    assert grew('clarigate_clarifications_total{state="expired"}') == 1
    assert grew('clarigate_inbound_events_total{kind="answer",platform="test"}') == 2
    assert grew('clarigate_runs_total{state="failed"}') == 1
    assert grew('clarigate_runs_total{state="finished"}') == 2


async def test_the_server_freezes_what_start_up_built_so_collections_skip_it(make_gateway):
    """A full collection would otherwise walk every module object: a pause of ~0.25 s per pass."""
    gateway, _ = await make_gateway(MemoryStore("t"), start=False)
    gc.unfreeze()
    lifespan = gateway_lifespan(gateway, grace=1)
    async with lifespan(build_app(gateway)):
        frozen = gc.get_freeze_count()
    gc.unfreeze()  # other tests' garbage stays collectable
    assert frozen > 10_000  # the interpreter, LangChain, the agent's graph


class PollingAdapter(TestAdapter):
    """A test platform whose receiver (like a poller) can be down."""

    up = True

    async def connection_up(self):
        return self.up


async def test_healthz_fails_when_a_worker_loop_or_a_receiver_is_dead(make_gateway):
    gateway, adapter = await make_gateway(MemoryStore("t"), adapter_class=PollingAdapter)
    async with client_for(gateway) as http:
        assert (await http.get("/healthz")).status_code == 200
        adapter.up = False
        response = await http.get("/healthz")
        assert response.status_code == 503 and response.json()["failed"] == {"test": "receiver down"}
        adapter.up = True
        reader = next(loop for loop in gateway.pool._loops if loop.get_name() == "read-jobs")
        reader.cancel()  # as if it had crashed
        await asyncio.sleep(0)
        response = await http.get("/healthz")
        assert response.status_code == 503 and response.json()["failed"] == {"read-jobs": "dead"}


#: One process of a replica under ``serve``: counts, sets its gauges, then waits to be told to end.
_PROCESS = """
import sys
from clarigate.gateway.runtime import metrics
runs, in_flight, connected = (int(a) for a in sys.argv[1:4])
for _ in range(runs):
    metrics.RUNS_STARTED.inc()
    metrics.RUN_LATENCY.observe(0.2)
metrics.JOBS_IN_FLIGHT.set(in_flight)
metrics.PLATFORM_CONNECTED.labels(platform="slack").set(connected)
print("counted", flush=True)
sys.stdin.read()
"""


def test_the_processes_of_a_replica_are_exposed_as_one(tmp_path, monkeypatch):
    """serve's processes count into one directory (prometheus-client's multiprocess mode): the
    web process's exposition adds up their counters and histograms, adds up jobs in flight,
    shows a gauge such as a receiver's connection as the live process that set it has it, and
    forgets the gauges of a process that ended."""
    import subprocess
    import sys

    from clarigate.gateway.runtime.ops import exposition
    from clarigate.gateway.runtime.processes import METRICS_DIR_VARIABLE, forget_metrics_of

    env = {**os.environ, METRICS_DIR_VARIABLE: str(tmp_path)}
    processes = []
    for runs, in_flight, connected in ((2, 3, 1), (5, 4, 0)):
        proc = subprocess.Popen(
            [sys.executable, "-c", _PROCESS, str(runs), str(in_flight), str(connected)],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None and proc.stdout.readline().strip() == "counted"
        processes.append(proc)
    monkeypatch.setenv(METRICS_DIR_VARIABLE, str(tmp_path))

    text = exposition("clarigate").decode()
    replica = parse_metrics(text)
    assert replica['clarigate_runs_total{state="started"}'] == 7
    assert replica["clarigate_run_seconds_count"] == 7
    assert "# TYPE clarigate_platform_api_errors_total counter" in text  # described before any use
    assert replica["clarigate_jobs_in_flight"] == 7
    assert replica['clarigate_platform_connected{platform="slack"}'] == 1

    first = processes[0]
    first.communicate("")  # the process that holds the connection ends
    forget_metrics_of(first.pid)
    replica = parse_metrics(exposition("clarigate").decode())
    assert replica['clarigate_runs_total{state="started"}'] == 7  # what it counted stays counted
    assert replica["clarigate_jobs_in_flight"] == 4
    assert replica['clarigate_platform_connected{platform="slack"}'] == 0
    processes[1].communicate("")


class RaisingAdapter(TestAdapter):
    """A test platform whose webhook raises what the request's ``raise`` parameter names."""

    def routes(self):
        async def hook(request: Request) -> JSONResponse:
            await request.body()
            match request.query_params.get("raise"):
                case "bad":
                    raise BadRequest("event without a chat id")
                case "forged":
                    raise BadRequest("signature does not match", status=401)
                case "bug":
                    raise ValueError(f"invalid literal for int(): {SECRET_WORDS!r}")
                case "outage":  # what the store raises when Redis refuses connections
                    raise redis.exceptions.ConnectionError(
                        "Error 111 connecting to 127.0.0.1:6380. Connection refused."
                    )
            return JSONResponse({"ok": True})

        return [Route("/test/events", hook, methods=["POST"])]


SECRET_WORDS = "what the person wrote"


async def test_a_bad_request_is_its_4xx_with_one_warning_line(make_gateway, caplog):
    gateway, _ = await make_gateway(MemoryStore("t"), start=False, adapter_class=RaisingAdapter)
    async with client_for(gateway) as http:
        for query, status, reason in [
            ("bad", 400, "event without a chat id"),
            ("forged", 401, "signature does not match"),
        ]:
            caplog.clear()
            with caplog.at_level(logging.INFO):
                response = await http.post(f"/test/events?raise={query}", content=b"{}")
            assert (response.status_code, response.json()) == (status, {"error": reason})
            line = one_bad_request_line(caplog, status)
            assert line == f"bad request to /test/events ({status}): {reason}"


async def test_anything_else_an_endpoint_raises_is_500_logged_with_its_traceback_and_counted(
    make_gateway, caplog
):
    """A ValueError too: our bug is not the platform's mistake (it redelivers on a 500)."""
    gateway, _ = await make_gateway(MemoryStore("t"), start=False, adapter_class=RaisingAdapter)
    before = http_errors("/test/events")
    async with client_for(gateway) as http:
        with caplog.at_level(logging.INFO):
            response = await http.post("/test/events?raise=bug", content=b"{}")
        metrics_text = (await http.get("/metrics")).text
    assert (response.status_code, response.json()) == (500, {"error": "internal error"})
    assert SECRET_WORDS not in response.text
    text = one_failure_with_traceback(caplog, ValueError)
    assert text.startswith("request to /test/events failed\nTraceback") and "in hook" in text
    assert http_errors("/test/events") == before + 1
    assert parse_metrics(metrics_text)['clarigate_http_errors_total{route="/test/events"}'] == before + 1


async def test_the_store_unreachable_is_503_with_retry_after_and_one_warning_per_outage(
    make_gateway, caplog, monkeypatch: pytest.MonkeyPatch
):
    """An outage is not a bug: the platform is told to come back, and the log says so once."""
    gateway, _ = await make_gateway(MemoryStore("t"), start=False, adapter_class=RaisingAdapter)
    store_answers = [False]

    async def ping() -> bool:
        return store_answers[0]

    monkeypatch.setattr(gateway.store, "ping", ping)
    monkeypatch.setattr(outage, "PROBE_SECONDS", 0.0)
    before, errors_before = http_unavailable("/test/events"), http_errors("/test/events")
    async with client_for(gateway) as http:
        with caplog.at_level(logging.DEBUG):
            answers = [await http.post("/test/events?raise=outage", content=b"{}") for _ in range(5)]
            # answered as usual, but the store still does not answer: the outage goes on
            assert (await http.post("/test/events", content=b"{}")).status_code == 200
            answers.append(await http.post("/test/events?raise=outage", content=b"{}"))
            metrics_text = (await http.get("/metrics")).text
        for response in answers:
            assert response.status_code == 503 and response.headers["retry-after"] == "5"
            assert response.json() == {"error": "service unavailable: the store is unreachable"}
        [line] = problem_lines(caplog)
        assert (line.levelno, line.exc_info) == (logging.WARNING, None)
        assert line.getMessage() == (
            "the store is unreachable (ConnectionError: Error 111 connecting to 127.0.0.1:6380. "
            "Connection refused.): webhooks are answered 503 until it is back"
        )
        assert not any(r.exc_info for r in caplog.records) and "Traceback" not in caplog.text
        assert http_unavailable("/test/events") == before + 6
        assert http_errors("/test/events") == errors_before  # not a bug
        series = 'clarigate_http_unavailable_total{route="/test/events"}'
        assert parse_metrics(metrics_text)[series] == before + 6
        # the store is back: the next request answered as usual says so, once
        store_answers[0] = True
        caplog.clear()
        with caplog.at_level(logging.INFO):
            assert (await http.post("/test/events", content=b"{}")).status_code == 200
            assert (await http.post("/test/events", content=b"{}")).status_code == 200
            back = [r.getMessage() for r in caplog.records if r.name.startswith("clarigate")]
            assert back == ["the store answers again: webhooks are answered as usual"]
            # the next outage is told again, and a bug is still a bug
            assert (await http.post("/test/events?raise=outage", content=b"{}")).status_code == 503
            assert (await http.post("/test/events?raise=bug", content=b"{}")).status_code == 500
        assert [r.levelno for r in problem_lines(caplog)] == [logging.WARNING, logging.ERROR]
        assert http_errors("/test/events") == errors_before + 1


async def test_a_client_that_leaves_before_its_body_is_read_is_neither_an_error_nor_answered(
    make_gateway, caplog
):
    gateway, _ = await make_gateway(MemoryStore("t"), start=False, adapter_class=WebhookAdapter)
    app = build_app(gateway)
    scope = {"type": "http", "method": "POST", "path": "/test/events", "headers": [], "query_string": b""}
    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        sent.append(message)

    before = http_errors("/test/events")
    with caplog.at_level(logging.INFO):
        await app(scope, receive, send)
    assert sent == []  # nobody is left to read an answer
    assert [r.levelno for r in caplog.records if "went away" in r.getMessage()] == [logging.INFO]
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert http_errors("/test/events") == before


async def test_readiness_is_logged_once_per_change_not_per_probe(make_gateway):
    from tests.log_capture import captured_logs

    runner = ScriptedRunner()
    gateway, _ = await make_gateway(MemoryStore("t"), runner, start=False)
    async with client_for(gateway) as http:
        with captured_logs([], level=logging.INFO) as logged:
            runner.healthy = False
            down = [await http.get("/readyz") for _ in range(3)]
            runner.healthy = True
            up = [await http.get("/readyz") for _ in range(2)]
    assert [r.json()["failed"] for r in down] == [{"checkpointer": "unreachable"}] * 3
    assert [r.status_code for r in up] == [200, 200]
    lines = logged.lines()
    assert len(lines) == 2 and "Traceback" not in logged.text()
    assert lines[0].endswith("WARNING clarigate.gateway.web.server: not ready: checkpointer unreachable")
    assert lines[1].endswith("INFO clarigate.gateway.web.server: ready again: checkpointer answers")
