"""The stores of a ``cluster_faults.py`` run, servers of its own that it can fault: a
``redis-server`` (``appendonly yes``, ``appendfsync everysec``) that can be killed, restarted and
have its append-only file cut back as a machine crash would, and a PostgreSQL cluster (``initdb``
in a temporary folder) that can be stopped, killed and kept down.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pwd
import signal
import subprocess
import sys
import time
from pathlib import Path

from redis.asyncio import Redis

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.deploy.test_sigterm import free_port  # noqa: E402


class OwnRedis:
    """A redis-server of this run (AOF, fsync every second) that can be killed and restarted."""

    def __init__(self, folder: Path) -> None:
        self.port = free_port()
        self.folder = folder
        folder.mkdir()
        self.cmd = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(folder)]
        self.cmd += [
            "--save",
            "",
            "--appendonly",
            "yes",
            "--appendfsync",
            "everysec",
            "--appenddirname",
            "appendonlydir",
        ]
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = f"redis://127.0.0.1:{self.port}/0"

    async def start(self) -> None:
        self.proc = subprocess.Popen(self.cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # noqa: ASYNC220
        for _ in range(600):
            try:
                client = Redis(port=self.port)
                await client.ping()
                await client.aclose()
                return
            except Exception:  # noqa: BLE001 (not up yet: loading the AOF)
                await asyncio.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    async def watch_aof(self) -> None:
        """Note the append-only file's size every 0.1 s (for ``lose_tail``)."""
        self.sizes: list[tuple[float, Path, int]] = []
        while True:
            with contextlib.suppress(OSError, ValueError):
                latest = max(self.folder.glob("appendonlydir/*.incr.aof"), key=lambda f: f.stat().st_mtime)
                self.sizes = [*self.sizes[-100:], (time.monotonic(), latest, latest.stat().st_size)]
            await asyncio.sleep(0.1)

    def lose_tail(self, seconds: float) -> int:
        """After a kill: cut the append-only file back to its size ``seconds`` ago, as a machine
        crash would lose what ``appendfsync everysec`` had not synced yet (a ``kill -9`` of the
        server alone loses nothing: its writes are in the page cache). Returns the bytes cut."""
        before = [(path, size) for at, path, size in self.sizes if at <= time.monotonic() - seconds]
        if not before:
            return 0
        path, size = before[-1]
        cut = path.stat().st_size - size
        if cut > 0:
            os.truncate(path, size)
        return max(cut, 0)


class OwnPostgres:
    """A PostgreSQL cluster of this run (trust, a free port), to restart, kill and keep down."""

    def __init__(self, folder: Path) -> None:
        self.data = folder
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/test"

    async def start(self) -> None:
        if not self.data.exists():
            self.data.mkdir(mode=0o700)
            self.data.parent.chmod(0o755)  # the server's user reaches its folder
            if os.geteuid() == 0:  # PostgreSQL refuses to run as root: as its own user
                owner = pwd.getpwnam("postgres")
                os.chown(self.data, owner.pw_uid, owner.pw_gid)
            run = [
                *self.as_owner(),
                "initdb",
                "-D",
                str(self.data),
                "-U",
                "postgres",
                "--auth=trust",
                "--no-sync",
            ]
            subprocess.run(run, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # noqa: ASYNC221
        cmd = [*self.as_owner(), "postgres", "-D", str(self.data), "-p", str(self.port), "-k", str(self.data)]
        cmd += ["-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200"]
        log = (self.data.parent / "postgres.log").open("ab")
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)  # noqa: ASYNC220
        for _ in range(600):
            probe = ["pg_isready", "-h", "127.0.0.1", "-p", str(self.port)]
            ready = subprocess.run(probe, capture_output=True)  # noqa: ASYNC221
            if ready.returncode == 0:
                break
            await asyncio.sleep(0.1)
        made = subprocess.run(  # noqa: ASYNC221
            ["createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "test"],
            capture_output=True,
        )
        if made.returncode and b"already exists" not in made.stderr:
            raise RuntimeError(made.stderr.decode())

    @staticmethod
    def as_owner() -> list[str]:
        """The prefix that runs a command as the ``postgres`` user when this is root (``setpriv``
        execs: the server keeps the pid it was started with)."""
        if os.geteuid() != 0:
            return []
        return ["setpriv", "--reuid=postgres", "--regid=postgres", "--clear-groups"]

    def stop(self, sig: int) -> None:
        """SIGINT: a clean fast shutdown; SIGKILL: the whole process group at once (a crash)."""
        if self.proc is not None and self.proc.poll() is None:
            if sig == signal.SIGKILL:
                os.killpg(self.proc.pid, signal.SIGKILL)
            else:
                self.proc.send_signal(sig)
            self.proc.wait()
            time.sleep(0.5)  # the backends exit once they see the postmaster gone
