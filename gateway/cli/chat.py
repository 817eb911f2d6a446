"""``clarigate chat``: the bot on the console platform, the first thing a newcomer sees.

The bot is built as ``serve`` builds it (the runner the configuration names: the in-process
agent, or the LangGraph server at ``LANGGRAPH_URL`` / ``agent.server_url``; the core with every
setting, ``run_timeout_seconds`` included), on the embedded store, with the console adapter as
its only platform (``clarigate.adapters.console``). So commands, declines, forms, approvals and
streaming behave as on Slack, Feishu or Telegram. The thread id lives in a file under the data
directory, so a restart continues the conversation, and its open question, from the agent's
checkpoints. The gateway's log goes to ``chat.log`` there, not over the conversation.
``/quit``, the end of input and Ctrl-C leave (exit code 0).

Run it with ``clarigate chat`` or ``python -m clarigate.gateway.cli.chat``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from clarigate.adapters.console import ConsoleAdapter
from clarigate.adapters.console.receive import ConsoleChat, Leave
from clarigate.adapters.console.render import words
from clarigate.agent.at_rest import private_file
from clarigate.gateway.boundary.outbound_items import ClarificationOut, TextReply
from clarigate.gateway.flow.agent_run import new_token
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.runtime.app import build_runner, close_gateway
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.runtime.logs import JsonFormatter, RunContextFilter, TextFormatter, guard_handlers
from clarigate.gateway.runtime.preflight import StartFailure, agent_start_failure, data_dir_failure
from clarigate.gateway.runtime.redaction import RedactingFilter, without_secrets
from clarigate.gateway.store.memory import MemoryStore
from clarigate.gateway.store.records import PendingRecord

THREAD_FILE = "terminal-thread"
LOG_FILE = "chat.log"
#: How long one wait for the core lasts before waiting again (a run is bounded by its own timeout).
SETTLE_SECONDS = 60.0

log = logging.getLogger(__name__)


class ConsoleBot:
    """The gateway, its embedded store and the console adapter, with the thread file."""

    def __init__(self, config: GatewayConfig, stdout: TextIO, thread_file: Path) -> None:
        """Nothing starts yet (``Gateway.start``); the runner is the one ``serve`` would use."""
        self.config = config
        self.thread_file = thread_file
        self.store = MemoryStore(config.bot_id)
        self.gateway = Gateway(config, self.store, build_runner(config))
        self.adapter = ConsoleAdapter(self.gateway, stdout)
        self.gateway.register(self.adapter)

    async def start(self) -> None:
        """Start the gateway (the agent is built here) and make sure the agent answers: a chat
        with an unreachable LangGraph server would only keep the person's messages waiting.

        An in-process agent that does not start is said as ``serve`` says it, with what to check
        (its model, key, tools); not a LangGraph server's, where that advice does not apply."""
        if not self.config.agent.server_url:
            from clarigate.agent.placement import SettingsDoNotApply

            try:
                await self.gateway.runner.start()
            except SettingsDoNotApply:
                raise  # a setting named, nothing about the model to check
            except Exception as exc:
                raise agent_start_failure(
                    exc, self.config.agent.model, data_dir=self.config.data_dir, graph=self.config.agent.graph
                ) from exc
        await self.gateway.start()
        if not await self.gateway.runner.ping():
            where = without_secrets(self.config.agent.server_url or "")  # printed, not logged
            raise RuntimeError(f"the agent does not answer{f' at {where}' if where else ''}")

    async def resume(self) -> None:
        """Continue the thread of the file, and its open question, if there is one: shown as its
        turn showed it, what it cannot hold in full right above it (``Asked.in_full``)."""
        if not self.thread_file.exists():
            return
        thread_id = self.thread_file.read_text(encoding="utf-8").strip()
        if not thread_id:
            return
        conv = self.adapter.conversation
        self.store.adopt_thread(conv.thread_key, thread_id, self.config.thread_ttl_seconds)
        pending_asked = getattr(self.gateway.runner, "pending_asked", None)
        try:
            asked = await pending_asked(thread_id) if pending_asked is not None else None
        except Exception:  # the conversation goes on; only its open question is not shown again
            log.warning("could not read the open question of thread %s", thread_id, exc_info=True)
            return
        if asked is None:
            return
        request, now = asked.request, time.time()
        record = PendingRecord(
            request=request,
            token=new_token(),
            thread_id=thread_id,
            conversation=conv,
            asked_by=self.adapter.sender,
            policy=self.config.answer_policy,
            created_at=now,
            expires_at=now + self.config.pending_ttl_seconds,
        )
        await self.store.save_pending(record)
        out = ClarificationOut(request=request, fallback_text=request.question, token=record.token)
        self.adapter.print(words("continuing", request.locale))
        if asked.in_full:  # what the question cannot hold, in full right above it, as its turn showed it
            await self.adapter.send(conv, TextReply(text=asked.in_full, from_agent=True))
        await self.adapter.send(conv, out)

    async def settle(self) -> None:
        """Wait until every job accepted so far is done, then keep the thread id in its file."""
        while True:
            try:
                await self.gateway.drain(timeout=SETTLE_SECONDS)
                break
            except TimeoutError:
                continue  # a long run: its own timeout (run_timeout_seconds) ends it
        thread_id = await self.store.thread_of_chat(self.adapter.conversation.thread_key)
        if thread_id is not None and self._saved_thread() != thread_id:
            private_file(self.thread_file).write_text(thread_id + "\n", encoding="utf-8")

    def _saved_thread(self) -> str | None:
        if not self.thread_file.exists():
            return None
        return self.thread_file.read_text(encoding="utf-8").strip() or None

    async def close(self) -> None:
        """Stop the workers and close the agent and the store."""
        try:
            await self.gateway.stop(grace=0)
        finally:
            await close_gateway(self.gateway)


def chat_main(
    config: GatewayConfig,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    thread_file: Path | None = None,
) -> int:
    """Run the terminal chat; 0 when the person leaves (/quit, end of input, Ctrl-C).

    1, with one line on stderr, when the bot cannot start (unknown model, missing key, a
    LangGraph server that cannot be reached, a data directory that cannot be used).
    """
    stdin = stdin or sys.stdin  # looked up at call time, not bound when the module loads
    stdout = stdout or sys.stdout
    data_dir = Path(config.data_dir)
    try:
        logging_to = _log_to(data_dir / LOG_FILE, config.log_format)
    except OSError as exc:
        print(f"clarigate chat: {_unusable(exc, config.data_dir)}", file=sys.stderr)
        return 1
    with logging_to, asyncio.Runner() as runner:
        bot: ConsoleBot | None = None
        started = False
        try:
            bot = ConsoleBot(config, stdout, thread_file or data_dir / THREAD_FILE)
            _start(runner, bot)
            started = True
            bot.adapter.print(words("banner", bot.adapter.locale))
            runner.run(bot.resume())
            ConsoleChat(bot.adapter, stdin, runner.run, bot.settle).loop()
        except (Leave, KeyboardInterrupt):
            stdout.write("\n")
            stdout.flush()
        except Exception as exc:
            if started:
                raise  # a bug in the chat itself: keep the traceback
            log.error("the bot could not start", exc_info=True)
            if isinstance(exc, StartFailure):  # serve's words
                print(f"clarigate chat: {exc.message}", file=sys.stderr)
                return 1
            first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            print(f"clarigate chat: the agent could not start: {first_line}", file=sys.stderr)
            return 1
        finally:
            if bot is not None:
                runner.run(bot.close())
    return 0


def _start(runner: asyncio.Runner, bot: ConsoleBot) -> None:
    """Start the bot on ``runner``'s loop.

    A Ctrl-C while it starts lets the agent finish opening its checkpointer, so that closing
    it afterwards leaves no worker thread reporting to a closed loop. A second Ctrl-C leaves at once.
    """
    starting = runner.get_loop().create_task(bot.start())

    async def started() -> None:
        await asyncio.shield(starting)

    try:
        runner.run(started())
    except KeyboardInterrupt:
        with contextlib.suppress(Exception):  # it failed to start: nothing more to wait for
            runner.run(started())
        raise


def _unusable(exc: OSError, data_dir: str) -> str:
    """Why the chat's log cannot be written, naming the data directory when it is the cause."""
    failure = data_dir_failure(exc, data_dir)
    return failure.message if failure is not None else f"cannot write its log: {exc}"


def _log_to(path: Path, log_format: str = "text") -> contextlib.AbstractContextManager[None]:
    """The gateway's log in ``path`` for the chat's duration (the terminal is the conversation's),
    in the configured format (``log_format``: one JSON object per line, as ``serve`` writes them);
    the file is made at once (an ``OSError`` when the data directory cannot be used)."""
    handler = logging.FileHandler(private_file(path), encoding="utf-8")  # what people wrote
    handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter())
    return _logging_to(handler)


@contextlib.contextmanager
def _logging_to(handler: logging.Handler) -> Iterator[None]:
    handler.addFilter(RunContextFilter())
    handler.addFilter(RedactingFilter())
    handler.setLevel(logging.INFO)
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    guard_handlers()  # as serve: the chatty libraries (HTTP clients, SDKs) held at WARNING
    if root.level > logging.INFO or root.level == logging.NOTSET:
        root.setLevel(logging.INFO)
    try:
        yield
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
        handler.close()


def main(argv: list[str] | None = None) -> int:
    """``python -m clarigate.gateway.cli.chat``: ``clarigate chat`` with its ``--config``."""
    from clarigate.gateway.cli.main import main as clarigate_main

    return clarigate_main(["chat", *(argv if argv is not None else sys.argv[1:])])


if __name__ == "__main__":
    sys.exit(main())
