"""The terminal chat: clarigate on embedded defaults, the first thing a newcomer sees.

Questions appear as their text fallback; typed answers go through the same parser
the platforms use (a number, an option's label, free text). Forms are asked field
by field, with the choices shown, and a value that does not fit is asked again.
The thread id lives in a file under the data directory, so a restart continues the
conversation (and its pending question). ``/new`` starts a new thread, ``/cancel``
dismisses the open question (the agent is told the person declined), ``/status`` and
``/help`` say where things stand and what to type, ``/quit`` exits; so do end of input and
Ctrl-C (exit code 0). As on the platforms, a message that is not an answer to an open
choice closes it and goes to the agent as a new request.

Run it with ``clarigate chat`` or ``python -m gateway.terminal``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
import uuid
from pathlib import Path
from typing import TextIO

from clarigate.agent.harness import AgentSettings, ClarifyingAgent, TurnOutput
from clarigate.agent.protocol import (
    AnsweredBy,
    FormField,
    HumanInputRequest,
    HumanInputResponse,
    answer_declined,
    answer_message_text,
    answer_with_form,
    check_form_values,
    detect_locale,
    looks_like_answer,
    parse_typed_reply,
    render_text_fallback,
    ui_text,
)
from clarigate.agent.protocol.models import Locale
from clarigate.gateway.flow.commands import Command, help_text, parse_command, quote
from clarigate.gateway.flow.notices import age_text, notice, text_locale

THREAD_FILE = "terminal-thread"
NEW, QUIT = "/new", "/quit"
PROMPT = "you> "
BOT = "bot> "


class _Leave(Exception):
    """The person typed /quit or the input ended."""


class _Restart(Exception):
    """The person typed /new in the middle of a form."""


class _Cancel(Exception):
    """The person typed /cancel in the middle of a form."""


def _field_prompt(field: FormField, locale: Locale = "en") -> str:
    """``Label (required) [1) a  2) b]: `` for one form field, in ``locale``."""
    note = ui_text("field_required", locale) if field.required else ""
    if field.options:
        choices = "  ".join(f"{n}) {o.label}" for n, o in enumerate(field.options, 1))
        many = ui_text("chat_several", locale) if field.type == "multi_select" else ""
        hint = f" [{choices}{many}]"
    else:
        hint = ui_text(f"chat_{field.type}", locale) if field.type in ("checkbox", "number", "date") else ""
    return f"  {field.label}{note}{hint}: "


class TerminalChat:
    """One person, one terminal, one agent thread at a time."""

    def __init__(self, agent: ClarifyingAgent, stdin: TextIO, stdout: TextIO, thread_file: Path) -> None:
        """``thread_file`` keeps the thread id between runs."""
        self.agent = agent
        self.stdin = stdin
        self.stdout = stdout
        self.thread_file = thread_file
        self.thread_id = self._load_or_new_thread()
        self.by = AnsweredBy(platform="terminal", user_id=os.environ.get("USER") or "you")
        self.last_locale: Locale | None = None  # of the last message the person wrote (not a command)

    def _load_or_new_thread(self) -> str:
        if self.thread_file.exists() and (saved := self.thread_file.read_text(encoding="utf-8").strip()):
            return saved
        return self._new_thread()

    def _new_thread(self) -> str:
        self.thread_id = f"terminal-{uuid.uuid4().hex}"
        self.thread_file.parent.mkdir(parents=True, exist_ok=True)
        self.thread_file.write_text(self.thread_id + "\n", encoding="utf-8")
        return self.thread_id

    def say(self, text: str) -> None:
        """Write ``text`` and a newline."""
        self.stdout.write(text + "\n")
        self.stdout.flush()

    def read(self, prompt: str) -> str:
        """One line of input without its newline; ``_Leave`` at end of input or on /quit."""
        self.stdout.write(prompt)
        self.stdout.flush()
        line = self.stdin.readline()
        if line == "":
            self.say("")
            raise _Leave
        text = line.strip()
        if text == QUIT:
            raise _Leave
        return text

    def show(self, output: TurnOutput) -> HumanInputRequest | None:
        """Print the turn's replies and its question; the question, if any."""
        for reply in output.replies:
            self.say(BOT + reply)
        if output.request is not None:
            self.say("")
            self.say(output.fallback_text or render_text_fallback(output.request))
            self.say("")
        return output.request

    def ask_form(self, request: HumanInputRequest) -> HumanInputResponse:
        """Ask each field in turn, asking again until its value fits."""
        raw: dict[str, str] = {}
        self.say(ui_text("chat_form_intro", request.locale))
        for field in request.fields:
            while True:
                text = self.read(_field_prompt(field, request.locale))
                command = parse_command(text)
                if command is not None:
                    self.form_command(command, request)
                    continue
                error = check_form_values(request, {field.name: text}).errors.get(field.name)
                if error is None:
                    if text:
                        raw[field.name] = text
                    break
                self.say(f"  ! {error}")
        check = check_form_values(request, raw)
        return answer_with_form(request, check.values, self.by)

    def form_command(self, command: Command, request: HumanInputRequest) -> None:
        """A command typed at a form's field prompt: /new and /cancel leave the form, others answer."""
        if command.name == "new":
            raise _Restart
        if command.name == "cancel":
            raise _Cancel
        self.say(self.command_reply(command, request))

    def next_turn(self, pending: HumanInputRequest | None) -> tuple[str, HumanInputResponse | None] | None:
        """What to send next: text and the structured answer, or None to start over (/new)."""
        if pending is not None and pending.input_mode == "form" and pending.fields:
            try:
                response = self.ask_form(pending)
            except _Restart:
                return None
            except _Cancel:
                return self.declined(pending)
            return answer_message_text(pending, response), response
        while True:
            text = self.read(PROMPT)
            if not text:
                continue
            command = parse_command(text)
            if command is not None and command.name == "new":
                return None
            if command is not None and command.name == "cancel" and pending is not None:
                return self.declined(pending)
            if command is not None:
                self.say(self.command_reply(command, pending))
                continue
            if pending is None:
                self.last_locale = text_locale(text) or self.last_locale  # a request, not an answer
                return text, None
            if not looks_like_answer(pending, text):
                self.last_locale = text_locale(text) or self.last_locale
                self.say(ui_text("chat_superseded", pending.locale))
                return text, None
            reply = parse_typed_reply(pending, text, self.by)
            if reply.response is not None:
                return answer_message_text(pending, reply.response), reply.response
            for problem in reply.problems:
                self.say(f"  ! {problem}")

    def declined(self, pending: HumanInputRequest) -> tuple[str, HumanInputResponse]:
        """The turn that tells the agent the person declined ``pending`` (/cancel)."""
        self.say(ui_text("chat_cancelled", pending.locale))
        response = answer_declined(pending, self.by)
        return answer_message_text(pending, response), response

    def command_reply(self, command: Command, pending: HumanInputRequest | None) -> str:
        """What /help, /status, /start (and /cancel with nothing open) answer in the terminal."""
        locale = _locale(command, pending, self.last_locale)
        if command.name == "cancel":
            return notice("nothing_to_cancel", locale)
        if command.name == "status":
            lines = [notice("status_title", locale)]
            if pending is not None:
                lines.append(notice("status_question_now", locale, question=quote(pending.question)))
            else:
                lines.append(notice("status_no_question", locale))
            age = age_text(time.time() - self.thread_file.stat().st_mtime, locale)
            lines.append(notice("status_thread", locale, age=age, new=NEW))
            return "\n".join(lines)
        greeting = [notice("greeting", locale), ""] if command.name == "start" else []
        return "\n".join([*greeting, help_text(locale, "/{}".format, extra=("quit",))])

    def locale(self) -> Locale:
        """The language of the terminal's own lines: the person's last message's, else ``$LANG``'s."""
        return self.last_locale or _system_locale()

    async def _turn(self, text: str, response: HumanInputResponse | None) -> TurnOutput:
        return await self.agent.run_turn(self.thread_id, text, response)

    def run(self, runner: asyncio.Runner) -> None:
        """The conversation loop, until /quit or end of input."""
        self.say(ui_text("chat_welcome", self.locale()))
        pending = runner.run(self.agent.pending_request(self.thread_id))
        if pending is not None:
            self.say(ui_text("chat_continuing", pending.locale))
            self.say(render_text_fallback(pending))
        while True:
            turn = self.next_turn(pending)
            if turn is None:
                self._new_thread()
                pending = None
                self.say(ui_text("chat_new_thread", self.locale()))
                continue
            try:
                pending = self.show(runner.run(self._turn(*turn)))
            except Exception as exc:  # a provider error must not end the conversation
                failure = f"{type(exc).__name__}: {exc}"
                self.say(ui_text("chat_agent_failed", self.locale(), failure=failure))
                pending = runner.run(self.agent.pending_request(self.thread_id))
                if pending is not None:
                    self.say(render_text_fallback(pending))


def _locale(command: Command, pending: HumanInputRequest | None, last: Locale | None = None) -> Locale:
    """The language to answer a command in: its words, the open question's, the last message the
    person wrote, else the system's (``$LANG``)."""
    if command.words:
        return detect_locale(command.words)
    if pending is not None:
        return pending.locale
    return last or _system_locale()


def _system_locale() -> Locale:
    """``$LANG``'s language: Chinese for ``zh_*``, else English."""
    return "zh" if os.environ.get("LANG", "").lower().startswith("zh") else "en"


def chat_main(
    settings: AgentSettings,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    thread_file: Path | None = None,
) -> int:
    """Run the terminal chat; 0 when the person leaves (/quit, end of input, Ctrl-C).

    1, with one line on stderr, when the agent cannot start (unknown model, missing key).
    """
    stdin = stdin or sys.stdin  # looked up at call time, not bound when the module loads
    stdout = stdout or sys.stdout
    thread_path = thread_file or Path(settings.data_dir) / THREAD_FILE
    with asyncio.Runner() as runner:
        agent: ClarifyingAgent | None = None
        try:
            agent = _start_agent(runner, settings)
            TerminalChat(agent, stdin, stdout, thread_path).run(runner)
        except (_Leave, KeyboardInterrupt):
            stdout.write("\n")
            stdout.flush()
        except Exception as exc:
            if agent is not None:
                raise  # a bug in the chat itself: keep the traceback
            first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            print(f"clarigate chat: the agent could not start: {first_line}", file=sys.stderr)
            return 1
        finally:
            if agent is not None:
                runner.run(agent.aclose())
    return 0


def _start_agent(runner: asyncio.Runner, settings: AgentSettings) -> ClarifyingAgent:
    """The agent, built on ``runner``'s loop.

    A Ctrl-C while it starts lets the checkpointer finish opening and closes it before
    leaving: a cancelled SQLite open leaves a worker thread that reports to the closed
    loop with a traceback. A second Ctrl-C leaves at once.
    """
    starting = runner.get_loop().create_task(ClarifyingAgent.create(settings))

    async def started() -> ClarifyingAgent:
        return await asyncio.shield(starting)

    try:
        return runner.run(started())
    except KeyboardInterrupt:
        try:
            agent = runner.run(started())
        except Exception:  # it failed to start: nothing to close
            raise KeyboardInterrupt from None
        runner.run(agent.aclose())
        raise


def main(argv: list[str] | None = None) -> int:
    """``python -m gateway.terminal``: settings from the environment, overridable by flags."""
    parser = argparse.ArgumentParser(prog="clarigate chat", description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="LLM_MODEL: offline, scripted:PATH or provider:model")
    parser.add_argument("--checkpointer", help="CHECKPOINTER_URL (default: SQLite under the data dir)")
    parser.add_argument("--data-dir", help="CLARIGATE_DATA_DIR (default: .clarigate)")
    args = parser.parse_args(argv)
    settings = AgentSettings.from_env()
    settings = settings.model_copy(
        update={
            "model": args.model or settings.model,
            "checkpointer_url": args.checkpointer or settings.checkpointer_url,
            "data_dir": args.data_dir or settings.data_dir,
        }
    )
    return chat_main(settings)


if __name__ == "__main__":
    sys.exit(main())
