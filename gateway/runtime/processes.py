"""``serve``'s processes: the web process starts, watches and stops its worker processes.

With Redis (``role: auto``) the HTTP side and the agent runs go to separate processes: an ack
(verify, dedupe, enqueue) never waits for the CPU a run is using, the kernel shares the cores
between them. The web process (the one the operator started) starts ``worker_processes`` worker
processes (``clarigate serve --role worker``, the same interpreter and code; by default one per
core the replica may use, so a burst of runs uses them all) and, for each:

- hands it a listening socket on 127.0.0.1 where the worker answers ``/healthz`` and
  ``/readyz``; the web process asks it when its own are asked, so probes see the whole replica
  on the one port;
- shares one metrics directory with it (prometheus-client's multiprocess mode), so the web
  process's ``/metrics`` counts what every process of the replica counted;
- hands it the read end of a pipe it never writes to: when the web process is gone however it
  went (SIGKILL included), the pipe reads end-of-file and the worker exits at once, as it would
  have died with it in one process (its jobs are claimed by another replica once stale);
- forwards SIGTERM (and SIGINT, SIGHUP) so both drain at once and waits for it to finish;
- starts it again when it exits on its own, and stops itself when that happens too often
  (``clarigate.gateway.runtime.supervise``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

log = logging.getLogger("clarigate.gateway.runtime.serve")

#: How long a question to the worker process (health, readiness) may take.
ASK_TIMEOUT = 2.0
#: How long each process's ``/readyz`` waits for each of its dependencies before calling it down:
#: under ``ASK_TIMEOUT``, so a worker process says in time which dependency does not answer
#: (rather than being "not answering" itself), and a probe gets the replica's answer in ~2 s.
CHECK_SECONDS = 1.5
#: How often the web process looks whether the worker process is still there (seconds).
WATCH_SECONDS = 0.2
#: How long a worker process that stopped answering is watched for its exit before it counts as hung.
DYING_SECONDS = 1.0
#: The keys under which a health or readiness answer names what is not well (``readiness``).
NAMED = ("starting", "failed", "degraded")
#: Beyond the shutdown grace, how long the worker process gets to hand its jobs back and exit.
EXIT_MARGIN_SECONDS = 10.0
#: The worker process's niceness: when both want a CPU, the kernel runs the web process first,
#: so an ack waits for no run (the worker gets the rest, which is all of it between acks). Set
#: on its scheduling autogroup too: a session of its own is an autogroup of its own, where the
#: kernel weighs autogroups against each other, not the niceness of their processes.
WORKER_NICENESS = 10
AUTOGROUP_FILE = "/proc/{}/autogroup"
#: ``worker_processes: auto`` starts one per usable core, at most this many (each holds the
#: agent, the SDKs and its runs: ~115–280 MB before its first run).
AUTO_MAX_WORKER_PROCESSES = 4


def usable_cpus(cgroup: str = "/sys/fs/cgroup") -> int:
    """The cores this process may run on: its CPU affinity, lowered by a container's CPU limit
    (cgroup v2 ``cpu.max``, or v1's CFS quota), rounded up."""
    try:
        count = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        count = os.cpu_count() or 1
    root = Path(cgroup)
    for quota_file, period_file in (
        (root / "cpu.max", None),
        (root / "cpu" / "cpu.cfs_quota_us", root / "cpu" / "cpu.cfs_period_us"),
    ):
        try:
            fields = quota_file.read_text().split()
            if period_file is not None:
                fields.append(period_file.read_text().strip())
            quota, period = fields[0], fields[1]
            if quota not in ("max", "-1"):
                count = min(count, max(1, math.ceil(int(quota) / int(period))))
            break
        except (OSError, ValueError, IndexError):
            continue
    return max(1, count)


def worker_process_count(setting: int | str) -> int:
    """How many worker processes ``worker_processes`` (a number or ``auto``) means here."""
    if setting == "auto":
        return min(usable_cpus(), AUTO_MAX_WORKER_PROCESSES)
    return max(1, int(setting))


class WorkerExited(Exception):
    """The worker process ended before it was asked to (``code``: its exit status)."""

    def __init__(self, code: int) -> None:
        super().__init__(f"the worker process exited with status {code}")
        self.code = code


def package_root() -> str:
    """The directory this ``gateway`` package was imported from (the worker imports the same)."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class WorkerProcess:
    """The worker process of this ``serve``: ``start``, ``wait_started``, ask it, ``stop``."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None) -> None:
        self.args = args  # passed on to ``clarigate serve`` (--config, --log-level, --log-format)
        self.env = env or {}  # settings of this worker process alone (its share of ``workers``)
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = ""
        self.stopping = False
        self.started = False  # answered /healthz once (``wait_started``)
        self.restarting = False  # dead or starting again (``supervise``): not a health problem
        self._parent_end: int | None = None
        self._http: httpx.AsyncClient | None = None

    @property
    def pid(self) -> int | None:
        """The worker process's pid (None before ``start``)."""
        return self.proc.pid if self.proc is not None else None

    @property
    def exit_code(self) -> int | None:
        """Its exit status once it has ended, else None."""
        return self.proc.poll() if self.proc is not None else None

    def start(self) -> None:
        """Start ``clarigate serve --role worker`` with its health socket and the liveness pipe."""
        listen = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listen.bind(("127.0.0.1", 0))
        listen.listen(64)
        self.url = f"http://127.0.0.1:{listen.getsockname()[1]}"
        watch_end, self._parent_end = os.pipe()
        env = {**os.environ, **self.env}
        # the same code as this process: its package first, then what this process was given
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root(), env.get("PYTHONPATH")) if p)
        command = [
            sys.executable,
            "-P",
            "-m",
            "clarigate.gateway.cli.main",
            "serve",
            "--role",
            "worker",
            *self.args,
        ]
        command += ["--supervised-by", f"{listen.fileno()},{watch_end}"]
        try:
            self.proc = subprocess.Popen(  # noqa: S603 (our own interpreter and module)
                command,
                env=env,
                pass_fds=(listen.fileno(), watch_end),
                # signals come from this process only (a terminal's Ctrl-C reaches this one, which
                # forwards it), so the worker sees one stop request, not two
                start_new_session=True,
            )
        finally:
            listen.close()  # the worker holds its own copy; once it is gone, connecting is refused
            os.close(watch_end)
        # from its first import on (the web process is starting too), not once it has started
        yield_cpu(self.proc.pid)
        self._http = httpx.AsyncClient(base_url=self.url, timeout=ASK_TIMEOUT)
        log.info("worker process started (pid %d)", self.proc.pid)

    async def wait_started(self, timeout: float) -> None:  # noqa: ASYNC109 (a start-up budget)
        """Return once the worker answers ``/healthz``; ``WorkerExited`` if it ends first."""
        deadline = time.monotonic() + timeout
        while True:
            code = self.exit_code
            if code is not None:
                raise WorkerExited(code)
            if await self._answers("/healthz") is not None:
                self.started = True
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"the worker process did not start within {timeout:.0f} s")
            await asyncio.sleep(WATCH_SECONDS)

    async def watch(self) -> int:
        """Wait until the worker process ends; its exit status."""
        while True:
            code = self.exit_code
            if code is not None:
                if self.pid is not None:
                    forget_metrics_of(self.pid)
                return code
            await asyncio.sleep(WATCH_SECONDS)

    async def _answers(self, path: str) -> httpx.Response | None:
        if self._http is None:
            return None
        try:
            return await self._http.get(path)
        except httpx.HTTPError:
            return None

    async def health_problems(self, path: str = "/healthz") -> dict[str, str]:
        """What the worker's ``/healthz`` (or ``/readyz``) reports failing; ``{}`` when it is well."""
        if self.restarting or self.exit_code is not None:
            return {}  # dead or starting again: the web process restarts it (``supervise``)
        if not self.started:  # alive, not ready yet (``serve`` bounds its start)
            return {"worker": "starting"} if path == "/readyz" else {}
        response = await self._answers(path)
        if response is None:  # killed just now (its socket closes before it is reaped)? Then it
            # is being started again: look a little longer before calling it hung
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.watch(), DYING_SECONDS)
            return {} if self.restarting or self.exit_code is not None else {"worker": "not answering"}
        if response.status_code == 200:
            return {}
        failed: Any = {}
        with contextlib.suppress(ValueError, AttributeError, TypeError):  # by state: merged again
            failed = {k: v for state in NAMED for k, v in (response.json().get(state) or {}).items()}
        if not isinstance(failed, dict) or not failed:
            return {"worker": "failing"}
        return {str(k): str(v) for k, v in failed.items()}

    def forward(self, sig: int) -> None:
        """Pass a stop signal on (the first one marks the worker as being stopped)."""
        if self.proc is not None and self.proc.poll() is None:
            self.stopping = True
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(sig)

    async def stop(self, grace: float) -> int | None:
        """Ask the worker to stop (SIGTERM) and wait: ``grace`` for its runs, then a margin to hand
        the rest back; SIGKILL after that. Its exit status (None if it never started)."""
        if self.proc is None:
            return None
        if self.proc.poll() is None and not self.stopping:
            self.forward(signal.SIGTERM)
        try:
            code = await asyncio.wait_for(self.watch(), grace + EXIT_MARGIN_SECONDS)
        except TimeoutError:
            waited = grace + EXIT_MARGIN_SECONDS
            log.warning("the worker process did not stop within %.0f s: killing it", waited)
            self.proc.kill()
            code = await self.watch()
        await self.close()
        # ended by the stop signal before its start was done: it ran nothing, a clean stop
        return 0 if code is not None and code < 0 and not self.started else code

    async def close(self) -> None:
        """Release the HTTP client and the pipe (the worker, if still running, then exits)."""
        if self._http is not None:
            await self._http.aclose()
            self._http = None
        if self._parent_end is not None:
            os.close(self._parent_end)
            self._parent_end = None


class WorkerGroup:
    """The worker processes of this ``serve``: started, asked, watched and stopped together.

    ``workers`` (runs in flight per replica) is shared out among them, each its own consumer of
    the replica's jobs. One that exits on its own is started again (``supervise.keep_running``).
    """

    def __init__(self, args: list[str], count: int, runs: int) -> None:
        count = max(1, count)
        shares = [runs // count + (1 if i < runs % count else 0) for i in range(count)]
        self.processes = [WorkerProcess(args, {"CLARIGATE_WORKERS": str(max(1, n))}) for n in shares]
        self._stopping = False

    @property
    def stopping(self) -> bool:
        """True once a stop signal was passed on."""
        return self._stopping or any(worker.stopping for worker in self.processes)

    def start(self) -> None:
        """Start the first worker process (it starts while the web process does); the others
        follow once it has started (``wait_started``), so a setting that stops one from
        starting is said once, not once per process."""
        self.processes[0].start()

    async def wait_started(self, timeout: float) -> None:  # noqa: ASYNC109 (a start-up budget)
        """Return once every one answers ``/healthz``; ``WorkerExited`` if one ends first."""
        await self.processes[0].wait_started(timeout)
        if self.stopping:  # stopped while the first one started: the others are not started
            return
        for worker in self.processes[1:]:
            worker.start()
        await asyncio.gather(*(worker.wait_started(timeout) for worker in self.processes[1:]))

    async def health_problems(self, path: str = "/healthz") -> dict[str, str]:
        """What their ``/healthz`` (or ``/readyz``) report failing (named by worker process when
        there are several); ``{}`` when all are well."""
        answers = await asyncio.gather(*(worker.health_problems(path) for worker in self.processes))
        if len(answers) == 1:
            return answers[0]
        return {
            f"worker {number}: {what}" if what != "worker" else f"worker {number}": why
            for number, problems in enumerate(answers, 1)
            for what, why in problems.items()
        }

    def forward(self, sig: int) -> None:
        """Pass a stop signal on to every one (none is started again after it)."""
        self._stopping = True
        for worker in self.processes:
            worker.forward(sig)

    async def stop(self, grace: float) -> int | None:
        """Stop them all at once (see ``WorkerProcess.stop``); the first non-zero exit status,
        else 0 (None if none started)."""
        codes = await asyncio.gather(*(worker.stop(grace) for worker in self.processes))
        started = [code for code in codes if code is not None]
        if not started:
            return None
        return next((code for code in started if code != 0), 0)


#: prometheus-client's multiprocess mode: every process of one ``serve`` counts into files there
METRICS_DIR_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"


def prepare_metrics_directory() -> str | None:
    """Give this ``serve`` and the worker processes it starts one metrics directory.

    prometheus-client adds counters and histograms of every process of a replica and keeps the
    gauges of the live ones when the variable names a directory before it is first imported, so
    this runs first thing in ``clarigate serve``. A worker process inherits the directory; an
    operator's own setting is kept. Returns the directory this call made (to remove at exit),
    or None when there was nothing to make (inherited, the operator's, or prometheus-client
    already imported, as in a test process: it then counts in memory, one process).
    """
    if os.environ.get(METRICS_DIR_VARIABLE) or "prometheus_client" in sys.modules:
        return None
    made = tempfile.mkdtemp(prefix="clarigate-metrics-")
    os.environ[METRICS_DIR_VARIABLE] = made
    return made


def remove_metrics_directory(made: str | None) -> None:
    """Remove a directory ``prepare_metrics_directory`` made (at the end of ``serve``)."""
    if made is not None:
        shutil.rmtree(made, ignore_errors=True)
        os.environ.pop(METRICS_DIR_VARIABLE, None)


def forget_metrics_of(pid: int) -> None:
    """Drop the live-only gauges of a worker process that ended (its counts stay counted)."""
    if os.environ.get(METRICS_DIR_VARIABLE):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid)


_web_pid: int | None = None  # in a worker process: the web process that started it


def serve_pid() -> int:
    """The pid of the ``serve`` the operator started: this process, or, in a worker process,
    the web process that started it (what a replica is known by)."""
    return _web_pid if _web_pid is not None else os.getpid()


def exit_with_parent(fd: int) -> None:
    """In the worker process: exit at once when the web process is gone (the pipe reads EOF);
    meanwhile, yield the CPU to it (``WORKER_NICENESS``, on its autogroup too where there is one)."""
    global _web_pid
    _web_pid = os.getppid()
    yield_cpu(0)  # done by the web process already when it started this one; again, in case
    loop = asyncio.get_running_loop()

    def gone() -> None:
        with contextlib.suppress(OSError):
            if os.read(fd, 1):
                return  # never written to: only EOF matters
        log.error("the web process is gone: the worker process exits now (its jobs are claimed once stale)")
        logging.shutdown()
        os._exit(1)

    loop.add_reader(fd, gone)


def yield_cpu(pid: int) -> None:
    """Put worker process ``pid`` (0: this one) ``WORKER_NICENESS`` below the web process, on its
    scheduling autogroup too (absent without autogroup scheduling, or not Linux). Idempotent."""
    web = os.getpid() if pid else os.getppid()
    with contextlib.suppress(OSError):  # never refused when lowering a priority; just in case
        nice = min(19, os.getpriority(os.PRIO_PROCESS, web) + WORKER_NICENESS)
        if os.getpriority(os.PRIO_PROCESS, pid) < nice:
            os.setpriority(os.PRIO_PROCESS, pid, nice)
    with contextlib.suppress(OSError):
        Path(AUTOGROUP_FILE.format(pid or "self")).write_text(f"{WORKER_NICENESS}\n")
