"""A replica is ready in seconds: the web process of ``serve`` answers ``/healthz`` and accepts
webhooks while its worker processes (the agent, LangChain, LangGraph) are still starting, and it
never imports the agent's libraries itself (it only verifies, acks and queues).

``serve`` runs for real on the real Redis with the built-in agent (offline model) and Slack over
HTTP against the fake Slack; ``web_start_probe`` holds the worker process stopped until the test
lets it go, and reports from inside the web process what it had imported when it first answered.
The start's duration is measured by hand (deploy/README "Processes"), not asserted here.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx

from tests.adapters.slack.fake_slack import BOT_TOKEN
from tests.adapters.slack.slack_user import SIGNING_SECRET, signed_headers
from tests.deploy.test_processes import fake_slack, slack_dm  # noqa: F401
from tests.deploy.test_sigterm import REDIS_URL, REPO, _delete_prefix, free_port, wait_until

PROBE = Path(__file__).with_name("web_start_probe.py")
#: What runs the agent: a web process that imports any of these pays seconds before it listens.
AGENT_LIBRARIES = ("langgraph", "langchain", "langchain_core", "langsmith", "openai", "anthropic", "mcp")


def agent_libraries(modules: list[str]) -> list[str]:
    return sorted({name for name in modules if name.split(".")[0] in AGENT_LIBRARIES})


def clean_environment(**env: str) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "FEISHU_", "TELEGRAM_"))}
    return {**keep, "PYTHONPATH": str(REPO), "LLM_MODEL": "offline", **env}


class HeldStart:
    """``serve`` run under ``web_start_probe`` (its worker process held while it starts)."""

    def __init__(self, proc: subprocess.Popen[bytes], port: int, report: Path) -> None:
        self.proc, self.report = proc, report
        self.url = f"http://127.0.0.1:{port}"
        self.held: list[int] = []

    def probed(self) -> dict | None:
        """What the probe saw in the web process: modules at the first 200 and now, held pids."""
        assert self.proc.poll() is None, self.proc.stdout.read().decode() if self.proc.stdout else ""
        return json.loads(self.report.read_text()) if self.report.exists() else None

    def first_answer(self) -> dict:
        """Once ``/healthz`` first answered 200: what the probe saw then (one worker held)."""
        first = wait_until(self.probed, 120, "the web process to answer /healthz")
        self.held = first["held"]
        assert len(self.held) == 1  # its worker process, held while it starts
        return first

    def stop(self) -> None:
        """SIGTERM: the replica stops cleanly."""
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(timeout=60) == 0, self.proc.stdout.read().decode() if self.proc.stdout else ""


@contextlib.contextmanager
def held_start(tmp_path: Path, prefix: str, **env: str) -> Iterator[HeldStart]:
    """``serve`` on the real Redis (bot id ``prefix``, one worker process) with ``env``; killed and
    its keys deleted afterwards."""
    port = free_port()
    report = tmp_path / "probe.json"
    env = clean_environment(
        REDIS_URL=REDIS_URL,
        CLARIGATE_BOT_ID=prefix,
        CLARIGATE_DATA_DIR=str(tmp_path / "data"),
        CLARIGATE_WORKER_PROCESSES="1",
        **env,
    )
    command = [sys.executable, str(PROBE), str(report), "serve", "--host", "127.0.0.1", "--port", str(port)]
    proc = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    start = HeldStart(proc, port, report)
    try:
        yield start
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in start.held:  # a held worker never reads its web process's end: kill it here
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        asyncio.run(_delete_prefix(prefix))


def test_the_web_process_answers_and_queues_before_its_worker_has_started(tmp_path, fake_slack):  # noqa: F811
    prefix = f"test-web-start-{uuid.uuid4().hex[:10]}"
    slack = {
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_API_URL": fake_slack.api_url,
    }
    with held_start(tmp_path, prefix, **slack) as start:
        url = start.url
        first = start.first_answer()
        assert agent_libraries(first["first"]) == []
        assert "clarigate.adapters.slack.adapter" in first["first"]  # the platform is up: it acks

        body = slack_dm("hello while the agent starts", "EvStart")
        headers = {"Content-Type": "application/json", **signed_headers(body, SIGNING_SECRET)}
        assert httpx.post(f"{url}/slack/events", content=body, headers=headers, timeout=10).status_code == 200
        assert httpx.get(f"{url}/healthz", timeout=10).json() == {"status": "ok"}
        ready = httpx.get(f"{url}/readyz", timeout=10)
        assert (ready.status_code, ready.json()["starting"]) == (503, {"worker": "starting"})
        # accepting and queueing the event did not make the web process load the agent either
        assert agent_libraries(start.probed()["now"]) == []

        os.kill(start.held[0], signal.SIGCONT)
        replies = wait_until(
            lambda: [
                c
                for c in fake_slack.calls
                if c.method in ("chat.postMessage", "chat.update")
                and "Working" not in str(c.params.get("text"))
            ],
            120,
            "the worker process to answer the queued event",
        )
        assert replies[0].params["channel"] == "D1"
        wait_until(lambda: httpx.get(f"{url}/readyz", timeout=10).status_code == 200, 60, "/readyz 200")
        start.stop()


#: The web role's import path with every webhook platform enabled: what ``serve`` imports, the
#: gateway and its adapters built, the app built: nothing of the agent's libraries.
WEB_IMPORT_PATH = textwrap.dedent(
    """
    import json, sys
    import clarigate.gateway.cli.main
    import clarigate.gateway.runtime.serve
    from clarigate.gateway.runtime.app import build_gateway
    from clarigate.gateway.runtime.config import load_config
    from clarigate.gateway.web.server import build_app

    config = load_config(None).model_copy(update={"role": "web"})
    gateway = build_gateway(config)
    build_app(gateway)
    print(json.dumps({"platforms": [a.platform for a in gateway.adapters], "modules": sorted(sys.modules)}))
    """
)


def test_the_web_role_import_path_leaves_the_agent_libraries_to_the_workers():
    env = clean_environment(
        REDIS_URL=REDIS_URL,
        SLACK_BOT_TOKEN=BOT_TOKEN,
        SLACK_SIGNING_SECRET=SIGNING_SECRET,
        TELEGRAM_BOT_TOKEN="123456:" + "A" * 35,
        TELEGRAM_WEBHOOK_URL="https://bot.example.com/telegram",
        TELEGRAM_WEBHOOK_SECRET="a-webhook-secret",
    )
    done = subprocess.run(
        [sys.executable, "-c", WEB_IMPORT_PATH],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["platforms"] == ["slack", "telegram"]
    assert agent_libraries(seen["modules"]) == []
