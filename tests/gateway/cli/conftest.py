"""The ``cli`` fixture: ``clarigate admin …`` run as from a shell, for a bot id."""

from __future__ import annotations

import asyncio
import json
import logging
import os

import pytest

from clarigate.gateway.cli.main import main
from clarigate.gateway.runtime.config import ENV_NAMES

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


@pytest.fixture
def cli(monkeypatch, capsys):
    """Run ``clarigate admin …`` for a bot id; returns (exit code, parsed JSON or text)."""
    for name in [*ENV_NAMES, *(n for n in os.environ if n.upper().startswith("CLARIGATE_"))]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("REDIS_URL", REDIS_URL)
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level

    async def run(bot_id: str, *args: str, as_json: bool = True):
        monkeypatch.setenv("CLARIGATE_BOT_ID", bot_id)
        # in a thread: the command runs its own event loop, as from a shell
        code = await asyncio.to_thread(main, ["admin", *args, *(["--json"] if as_json else [])])
        out = capsys.readouterr()
        return code, (json.loads(out.out) if as_json and code == 0 else out.out + out.err)

    yield run
    root.handlers[:] = handlers
    root.setLevel(level)
