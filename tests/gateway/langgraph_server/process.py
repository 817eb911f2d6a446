"""A real LangGraph server for tests: ``langgraph dev`` (the in-memory ``langgraph-api`` runtime)
serving ``graphs.py`` on a free port of 127.0.0.1, in a work directory of the test's own (where it
keeps its threads across a restart)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import yaml

from tests.agent.openai_stub import Stub, serve

HERE = Path(__file__).parent
TYPED_GRAPHS = HERE.parent.parent / "agent" / "typed_graphs.py"
#: How long the server may take to start (it imports LangChain and the graphs).
START_SECONDS = 90.0

ASKER_SCRIPT = [
    {
        "tool_calls": [
            {
                "name": "ask_clarification",
                "args": {
                    "question": "Which database should I use?",
                    "clarification_type": "approach_choice",
                    "options": ["PostgreSQL", "SQLite"],
                },
            }
        ]
    },
    {"content": "Going with {last_user}."},
    {"content": "Second request done: {last_user}."},
]
APPROVER_SCRIPT = [
    {"tool_calls": [{"name": "delete_data", "args": {"target": "test-data"}}]},
    {"content": "Done: {last_user}"},
]

#: Looks something up, then writes its answer slowly (the run streams it).
WRITER_SCRIPT = [
    {"tool_calls": [{"name": "search_docs", "args": {"query": "{last_user}"}}]},
    {
        "content": "The guide says to run the migration first, then restart every worker in turn.",
        "token_delay_seconds": 0.05,
    },
]


#: The graphs of ``tests/agent/stream_graphs.py`` the server serves too.
STREAM_GRAPHS = (
    "progress",
    "two_steps",
    "pause_before",
    "pause_after",
    "pause_in_subgraph",
    "pause_after_in_subgraph",
    "pause_before_subgraph",
    "pause_at_subgraph_end",
    "no_messages",
)


def free_port() -> int:
    """A port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LangGraphServer:
    """One ``langgraph dev`` process; ``start``/``stop`` may be called again (same port, same state).
    ``env``: settings of the server's own (``BG_JOB_TIMEOUT_SECS``) on top of the tests'."""

    def __init__(self, workdir: Path, env: dict[str, str] | None = None) -> None:
        self.workdir = workdir
        self.env = dict(env or {})
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.tool_log = workdir / "tool.log"
        self.tool_log.touch()
        # the OpenAI-compatible stub the ``hitl_user`` graph's model talks to (refuses bad histories)
        self.stub = Stub()
        serve(self.stub)
        (workdir / "asker.yaml").write_text(yaml.safe_dump(ASKER_SCRIPT))
        (workdir / "approver.yaml").write_text(yaml.safe_dump(APPROVER_SCRIPT))
        (workdir / "writer.yaml").write_text(yaml.safe_dump(WRITER_SCRIPT))
        # graph paths in langgraph.json are read from the server's working directory
        graphs = {
            name: f"{HERE / 'graphs.py'}:{name}"
            for name in (
                "asker",
                "approver",
                "interrupter",
                "sleeper",
                "writer",
                "hitl_user",
                "hitl_approve_or_edit",
                "raising_tool_user",
                "answer_echo",
                "stub_agent",
            )
        }
        # typed interrupts (``response_schema``): the graphs the in-process tests use too
        typed = ("booking", "checked_booking", "long_booking", "booking_then_own_check")
        graphs.update({name: f"{TYPED_GRAPHS}:{name}" for name in typed})
        # typed interrupts a Cancel may or may not resume (``tests/agent/confirm_graphs.py``)
        confirm = HERE.parents[1] / "agent" / "confirm_graphs.py"
        graphs.update({name: f"{confirm}:{name}" for name in ("confirm_booking", "note_or_decline")})
        # operators' graphs that read who is talking (``tests/agent/speaker_graphs.py``)
        speakers = HERE.parents[1] / "agent" / "speaker_graphs.py"
        graphs.update({f"speaker_{n}": f"{speakers}:{n}" for n in ("declares", "own_context", "no_schema")})
        # operators' graphs of ``tests/agent/stream_graphs.py``: progress lines, breakpoints
        stream_graphs = HERE.parent.parent / "agent" / "stream_graphs.py"
        graphs.update({name: f"{stream_graphs}:{name}" for name in STREAM_GRAPHS})
        # operators' graphs of ``tests/agent/user_graphs.py`` that shorten their thread in a turn,
        # and one whose options are ``{label, value}`` objects
        user_graphs = HERE.parents[1] / "agent" / "user_graphs.py"
        mine = ("trimming", "tidy_after_pause", "environments", "plan", "review")
        graphs.update({name: f"{user_graphs}:{name}" for name in mine})
        # operators' graphs whose parallel branches reply and ask in one step
        branches = HERE.parents[1] / "agent" / "branch_graphs.py"
        graphs.update({name: f"{branches}:{name}" for name in ("reply_and_ask", "two_asks")})
        # runs that do not end as planned: the recursion limit, a slow job stopped on the way (the
        # run that resumes a question, too)
        long_graphs = ("loop", "slow_if", "ask_then_slow")
        graphs.update({name: f"{HERE / 'long_graphs.py'}:{name}" for name in long_graphs})
        # operators' graphs at the edges: one that says nothing, two questions from one step
        edge_graphs = HERE.parents[1] / "agent" / "edge_graphs.py"
        graphs.update({name: f"{edge_graphs}:{name}" for name in ("silent", "parallel")})
        self.config = workdir / "langgraph.json"
        self.config.write_text(json.dumps({"dependencies": [str(HERE)], "graphs": graphs}))
        self._proc: subprocess.Popen[bytes] | None = None
        self._log = workdir / "server.log"

    def start(self) -> None:
        """Start the server and wait until it answers ``/ok``."""
        cli = Path(sys.executable).parent / "langgraph"
        env = {
            **os.environ,
            "ASKER_SCRIPT": str(self.workdir / "asker.yaml"),
            "APPROVER_SCRIPT": str(self.workdir / "approver.yaml"),
            "WRITER_SCRIPT": str(self.workdir / "writer.yaml"),
            "TOOL_LOG": str(self.tool_log),
            "OPENAI_STUB_URL": self.stub.url,
            "NO_PROXY": "127.0.0.1,localhost",
            "LANGGRAPH_CLI_NO_ANALYTICS": "1",
            "LANGSMITH_TRACING": "false",
            **self.env,
        }
        command = [
            str(cli), "dev", "--no-browser", "--no-reload", "--allow-blocking",
            "--host", "127.0.0.1", "--port", str(self.port), "--config", str(self.config),
        ]  # fmt: skip
        with self._log.open("ab") as log:
            self._proc = subprocess.Popen(
                command,
                cwd=self.workdir,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"langgraph dev exited: {self._log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.url}/ok", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"langgraph dev did not answer within {START_SECONDS} s")

    def stop(self) -> None:
        """Stop the server (SIGTERM: it writes its threads to the work directory first)."""
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()

    def kill(self) -> None:
        """Kill the server at once (SIGKILL, as a crash or the OOM killer does): what it had not
        written to its work directory yet is lost (threads and runs are written every 10 s,
        checkpoints only on a clean stop)."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()

    def tool_calls(self) -> list[str]:
        """The lines the ``delete_data`` tool wrote: one per time it ran."""
        return self.tool_log.read_text().splitlines()
