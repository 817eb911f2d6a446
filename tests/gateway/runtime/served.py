"""``clarigate serve`` as an operator starts it: a subprocess with a clean environment, its output
collected line by line; and a platform whose start never ends, to stop a replica mid-start."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, ClassVar, Self

from clarigate.gateway.boundary.messages import Conversation, MessageRef
from clarigate.gateway.boundary.outbound_items import Outbound
from clarigate.gateway.boundary.port import GatewayPort, PlatformAdapter

REPO = Path(__file__).resolve().parents[3]
CLARIGATE = [sys.executable, "-m", "clarigate.gateway.cli.main"]
#: How long a served process may take to say something (CI machines are busy).
START_SECONDS = 120.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def operator_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """Only what an operator's shell would hold, plus ``extra``: no CLARIGATE_*, no platform keys."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "PYTHONPATH": str(REPO),
        "CLARIGATE_DATA_DIR": str(tmp_path / "data"),
    }
    env.update(extra)
    return env


class Served:
    """A ``clarigate`` subprocess (``args``, or ``command`` whole) whose merged output is collected."""

    def __init__(
        self, args: list[str], env: dict[str, str], cwd: Path, command: list[str] | None = None
    ) -> None:
        self.proc = subprocess.Popen(
            command or [*CLARIGATE, *args],
            env=env,
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    @property
    def output(self) -> str:
        return "\n".join(self.lines)

    def wait_for_line(self, needle: str, timeout: float = START_SECONDS) -> bool:
        """Whether a line holding ``needle`` comes within ``timeout`` seconds (False once it exited)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(needle in line for line in self.lines):
                return True
            if self.proc.poll() is not None:
                self._reader.join(timeout=5)
                return any(needle in line for line in self.lines)
            time.sleep(0.05)
        return False

    def count(self, needle: str) -> int:
        return sum(needle in line for line in self.lines)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 60) -> int:
        """Send ``sig`` (to this process only) and return its exit status; killed if it hangs."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.wait(timeout)

    def wait(self, timeout: float) -> int:
        """Its exit status, waited for ``timeout`` seconds; killed (and the status returned) after."""
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self._reader.join(timeout=5)
        return code


class NeverReceiving(PlatformAdapter):
    """Platform ``stuck`` (``extra_adapters``): its receiver's start never ends, so the process
    that takes messages in (``all``, or the web process) stays in its start-up for good, while a
    worker process (which sends only) starts as usual."""

    platform: ClassVar[str] = "stuck"

    @classmethod
    def from_settings(cls, settings: Any, gateway: GatewayPort) -> Self:
        """Built by the registry: it needs no settings of its own."""
        return cls()

    async def start_receiving(self) -> None:
        """Never done."""
        await asyncio.Event().wait()

    async def send(self, conversation: Conversation, item: Outbound) -> MessageRef | None:
        return None


STUCK_PLATFORM = '["tests.gateway.runtime.served:NeverReceiving"]'
