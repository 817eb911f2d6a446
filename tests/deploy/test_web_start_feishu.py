"""A replica with Feishu is ready in seconds too: lark-oapi (seconds of CPU to import) loads in the
background after the web process's port is open, so ``/healthz`` answers, the URL-verification
challenge is echoed and Feishu's events are acked and queued while the SDK, the bot's identity
and the worker process are still starting; ``/readyz`` names what is.

``serve`` runs for real on the real Redis with the built-in agent (offline model) and Feishu in
webhook mode against the fake open API, which holds its "who am I" answer until the test lets
it go (so the adapter is still starting for as long as the test looks); ``web_start_probe`` holds
the worker process. The start's duration is measured by hand (deploy/README "Processes").
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import uuid
from collections.abc import Iterator

import httpx
import pytest

from tests.adapters.feishu.cards import text_of
from tests.adapters.feishu.events import ENCRYPT_KEY, VERIFICATION_TOKEN, encrypt, message_event, signed
from tests.adapters.feishu.fake_open_api import FakeOpenApi
from tests.deploy.test_sigterm import REDIS_URL, REPO, wait_until
from tests.deploy.test_web_start import WEB_IMPORT_PATH, agent_libraries, clean_environment, held_start


@pytest.fixture
def fake_feishu() -> Iterator[FakeOpenApi]:
    """The fake Feishu open API on a loopback port, its "who am I" held until the test sets it."""
    api = FakeOpenApi().start()
    api.info_hold = threading.Event()
    yield api
    api.info_hold.set()
    api.close()


def feishu_app(api: FakeOpenApi) -> dict[str, str]:
    """A Feishu app in webhook mode, its open API the fake's."""
    return {
        "FEISHU_APP_ID": f"cli_{uuid.uuid4().hex[:10]}",
        "FEISHU_APP_SECRET": "an-app-secret",
        "FEISHU_VERIFICATION_TOKEN": VERIFICATION_TOKEN,
        "FEISHU_ENCRYPT_KEY": ENCRYPT_KEY,
        "FEISHU_DOMAIN": api.url,
    }


def test_a_feishu_web_process_answers_and_queues_while_the_sdk_and_the_worker_start(tmp_path, fake_feishu):
    prefix = f"test-web-start-feishu-{uuid.uuid4().hex[:10]}"
    with held_start(tmp_path, prefix, **feishu_app(fake_feishu)) as start:
        url = start.url
        first = start.first_answer()
        assert agent_libraries(first["first"]) == []
        assert "clarigate.adapters.feishu.adapter" in first["first"]  # the platform is up: it acks

        challenge = {"challenge": "ready-yet", "token": VERIFICATION_TOKEN, "type": "url_verification"}
        sealed = json.dumps({"encrypt": encrypt(json.dumps(challenge).encode())}).encode()
        answer = httpx.post(f"{url}/feishu/events", content=sealed, timeout=10)
        assert (answer.status_code, answer.json()) == (200, {"challenge": "ready-yet"})
        body, headers = signed(message_event("hello while everything starts", event_id="ev-start-1"))
        accepted = httpx.post(f"{url}/feishu/events", content=body, headers=headers, timeout=10)
        assert accepted.status_code == 200
        assert httpx.get(f"{url}/healthz", timeout=10).json() == {"status": "ok"}
        ready = httpx.get(f"{url}/readyz", timeout=10)
        starting = {"worker": "starting", "feishu": "starting"}
        assert ready.status_code == 503 and ready.json() == {"status": "unavailable", "starting": starting}
        assert agent_libraries(start.probed()["now"]) == []

        fake_feishu.info_hold.set()  # the bot's identity answered: only the worker is still starting
        wait_until(
            lambda: httpx.get(f"{url}/readyz", timeout=10).json().get("starting") == {"worker": "starting"},
            120,
            "the Feishu adapter to finish starting",
        )
        os.kill(start.held[0], signal.SIGCONT)
        replies = wait_until(
            lambda: [t for t in map(text_of, fake_feishu.shown()) if t and "Working" not in t],
            120,
            "the worker process to answer the queued event",
        )
        assert replies and all(c.body["receive_id"] == "oc_p2p" for c in fake_feishu.posted())
        wait_until(lambda: httpx.get(f"{url}/readyz", timeout=10).status_code == 200, 60, "/readyz 200")
        start.stop()


#: Every module of the Feishu adapter imported, then the web role's import path with Feishu on.
FEISHU_MODULES = textwrap.dedent(
    """
    import pkgutil, importlib
    import clarigate.adapters.feishu as feishu
    for module in pkgutil.iter_modules(feishu.__path__):
        importlib.import_module(f"clarigate.adapters.feishu.{module.name}")
    """
)


def test_the_web_role_with_feishu_leaves_lark_oapi_to_be_loaded_after_the_start(fake_feishu):
    done = subprocess.run(
        [sys.executable, "-c", FEISHU_MODULES + WEB_IMPORT_PATH],
        cwd=REPO,
        env=clean_environment(REDIS_URL=REDIS_URL, **feishu_app(fake_feishu)),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["platforms"] == ["feishu"]
    assert [m for m in seen["modules"] if m.split(".")[0] == "lark_oapi"] == []
    assert agent_libraries(seen["modules"]) == []
