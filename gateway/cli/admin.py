"""``clarigate admin``: look into and mend a bot's live store (same REDIS_URL and bot id as ``serve``).

    clarigate admin threads [--chat TEXT]               chat threads, agent threads, last activity
    clarigate admin pending [--cancel REQUEST_ID]       open clarifications; cancel one
    clarigate admin backlog [--redrive|--drop ENTRY]    stream length, oldest entry, held jobs
    clarigate admin reset-thread CHAT                   start a chat over (a new agent thread)
    clarigate admin consumers [--remove NAME|--prune]   stream consumers; remove dead ones
    clarigate admin identity [--forget PLATFORM]        the platform identities under the bot id

Every command takes ``--json``. Changes that lose work (``--cancel``, ``--drop``, ``reset-thread``,
``--forget``) name what they change and ask for confirmation on a terminal; ``--yes`` confirms
beforehand (needed where stdin is not a terminal, and with ``--json``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TextIO

from clarigate.gateway.jobs.upkeep import DEAD_CONSUMER_SECONDS

if TYPE_CHECKING:  # parsing stays light: ``clarigate serve`` builds this parser before it starts
    from clarigate.gateway.flow.intake import Gateway
    from clarigate.gateway.runners.base import AgentRunner
    from clarigate.gateway.runtime.config import GatewayConfig


def add_admin_parser(commands: Any) -> None:
    """The ``admin`` command and its subcommands, on the ``clarigate`` parser."""
    text = "look into and mend the bot's live store (Redis)"
    admin = commands.add_parser("admin", help=text, description=text)
    sub = admin.add_subparsers(dest="admin_command", required=True)

    def command(name: str, text: str) -> argparse.ArgumentParser:
        parser = sub.add_parser(name, help=text, description=text)
        parser.add_argument("--config", help="the bot's YAML file (default: $CLARIGATE_CONFIG)")
        parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
        return parser

    command("threads", "list chat threads (find one with --chat)").add_argument(
        "--chat", help="only chat keys containing this text (a channel or chat id)"
    )
    pending = command("pending", "list open clarifications (cancel one with --cancel)")
    pending.add_argument("--cancel", metavar="REQUEST_ID", help="close this clarification as declined")
    pending.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    backlog = command("backlog", "the job stream: length, oldest entry, jobs held per consumer")
    one_job = backlog.add_mutually_exclusive_group()  # both given, one was done and one not
    one_job.add_argument("--redrive", metavar="ENTRY", help="let a live replica run this held job now")
    one_job.add_argument("--drop", metavar="ENTRY", help="complete this job without running it")
    backlog.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    reset = command("reset-thread", "start a chat over with a new agent thread")
    reset.add_argument("chat", help="the chat key, or what `admin threads --chat` finds it by (a chat id)")
    reset.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    consumers = command("consumers", "list the stream's consumers (remove dead ones)")
    removal = consumers.add_mutually_exclusive_group()
    removal.add_argument("--remove", metavar="NAME", help="remove a consumer that holds no job")
    removal.add_argument(
        "--prune",
        action="store_true",
        help=f"remove every consumer idle {DEAD_CONSUMER_SECONDS / 3600:g} h or more with no job "
        "(as a running gateway does)",
    )
    identity = command("identity", "the platform identities recorded under the bot id")
    identity.add_argument("--forget", metavar="PLATFORM", help="forget one (after a bot really moved)")
    identity.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    # without it, "clarigate admin" alone said "the following arguments are required: admin_command"
    sub.metavar = "{" + ",".join(sub.choices) + "}"


def admin_main(config: GatewayConfig, args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run one admin command; 0 done, 1 refused or not found, 3 Redis unreachable, 4 Redis refused
    the password or database in REDIS_URL (serve's exit codes)."""
    from clarigate.gateway.cli.admin_store import AdminError
    from clarigate.gateway.runtime.preflight import StartFailure

    try:
        result = asyncio.run(_run(config, args))
    except AdminError as exc:
        print(f"clarigate admin: {exc}", file=sys.stderr)
        return 1
    except StartFailure as exc:  # Redis refused us (4) or did not answer (3)
        print(f"clarigate admin: {exc}", file=sys.stderr)
        return int(exc.code)
    except (OSError, ConnectionError) as exc:
        print(f"clarigate admin: Redis is not reachable: {exc}", file=sys.stderr)
        return 3
    except Exception as exc:
        if type(exc).__module__.startswith("redis"):
            print(f"clarigate admin: Redis: {str(exc).splitlines()[0]}", file=sys.stderr)
            return 3
        raise
    out = out or sys.stdout
    if result is None:  # "no" at the confirmation question
        out.write("nothing changed\n")
        return 1
    if args.json:
        out.write(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    elif _listing(args):  # the bot id read, so a wrong CLARIGATE_BOT_ID shows
        table = _table(result)
        out.write(f"bot {config.bot_id}:" + (" (none)\n" if table == "(none)\n" else "\n" + table))
    else:
        out.write(_table(result))
    return 0


def _listing(args: argparse.Namespace) -> bool:
    """True for a command that only lists (no change asked for)."""
    changes = ("cancel", "redrive", "drop", "remove", "prune", "forget")
    return args.admin_command != "reset-thread" and not any(getattr(args, c, None) for c in changes)


def _confirm(args: argparse.Namespace, question: str) -> bool:
    from clarigate.gateway.cli.admin_store import AdminError

    if getattr(args, "yes", False):
        return True
    if args.json or not sys.stdin.isatty():
        raise AdminError(f"{question}: add --yes to confirm")
    return input(f"{question}? Type yes to confirm: ").strip().lower() == "yes"


async def _answers(link: Any, url: str) -> None:
    """One ``PING`` first, as ``serve`` pings at start: Redis refusing the password or the
    database, or not answering, is said as ``serve`` says it, naming REDIS_URL (``StartFailure``)."""
    from clarigate.gateway.runtime.preflight import (
        ExitCode,
        StartFailure,
        not_reachable,
        ping_redis,
        redis_advice,
    )
    from clarigate.gateway.runtime.redaction import without_secrets

    where = f"Redis at {without_secrets(url)}"
    why = await ping_redis(link, where)
    if why is not None:
        raise StartFailure(ExitCode.STORE_UNREACHABLE, not_reachable(where, why, redis_advice(url)))


async def _run(config: GatewayConfig, args: argparse.Namespace) -> Any:
    from clarigate.gateway.cli.admin_store import Admin, AdminError

    async with Admin(config) as admin:
        await _answers(admin.redis, str(config.redis_url))
        name = args.admin_command
        if name == "threads":
            return await admin.threads(args.chat)
        if name == "pending":
            return await _pending(config, admin, args)
        if name == "backlog":
            if args.redrive:
                return await admin.redrive(args.redrive)
            if args.drop:
                if not _confirm(args, f"drop {await admin.describe(args.drop)} without running it"):
                    return None
                return await admin.drop(args.drop)
            return await admin.backlog()
        if name == "reset-thread":
            return await _reset_thread(config, admin, args)
        if name == "consumers":
            if args.remove:
                return await admin.remove_consumer(args.remove)
            if args.prune:
                return {"removed": await admin.prune_consumers()}
            return await admin.consumers()
        if name == "identity":
            return await _identity(config, admin, args)
    raise AdminError(f"unknown admin command {name!r}")


async def _pending(config: GatewayConfig, admin: Any, args: argparse.Namespace) -> Any:
    if not args.cancel:
        return await admin.pending()
    record = await admin.open_question(args.cancel)
    question = record.request.question.strip().splitlines()[0][:80]
    chat = record.conversation.thread_key
    if not _confirm(args, f"cancel clarification {args.cancel} ({question!r}, chat {chat})"):
        return None
    gateway, unavailable = _gateway(config, admin)
    adapters = {adapter.platform: adapter for adapter in gateway.adapters}
    return await admin.cancel(args.cancel, adapters, unavailable)


async def _reset_thread(config: GatewayConfig, admin: Any, args: argparse.Namespace) -> Any:
    from clarigate.gateway.cli.admin_chats import chat_key, reset_thread

    key = await chat_key(admin, args.chat)
    matched = "" if key == args.chat else f" (matched by {args.chat!r})"
    if not _confirm(args, f"start chat {key}{matched} over with a new agent thread"):
        return None
    gateway, unavailable = _gateway(config, admin)
    return await reset_thread(admin, key, gateway.control, unavailable)


async def _identity(config: GatewayConfig, admin: Any, args: argparse.Namespace) -> Any:
    from clarigate.gateway.cli.admin_store import AdminError
    from clarigate.gateway.runtime.identity import forget_identity, recorded_identities

    recorded = await recorded_identities(admin.redis, config.bot_id)
    if args.forget:
        who = recorded.get(args.forget, {}).get("who", "(only its claim is left)")
        if not _confirm(args, f"forget that bot id {config.bot_id!r} belongs to {args.forget} {who}"):
            return None
        if not await forget_identity(admin.redis, config.bot_id, args.forget):
            raise AdminError(f"no {args.forget} identity is recorded under bot id {config.bot_id!r}")
        return {"forgotten": args.forget}
    return [
        {"platform": p, **record, "since_utc": _utc(record.get("since"))} for p, record in recorded.items()
    ]


def _utc(epoch: Any) -> str | None:
    """``epoch`` seconds as an ISO time in UTC (``2026-12-01T09:30:00Z``)."""
    if not isinstance(epoch, int | float):
        return None
    return datetime.fromtimestamp(epoch, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _gateway(config: GatewayConfig, admin: Any) -> tuple[Gateway, dict[str, str]]:
    """A gateway on the bot's store with the configured platforms' adapters (not started: only
    sending), to close a question's message, and why each one that could not be built was not."""
    from clarigate.gateway.flow.intake import Gateway
    from clarigate.gateway.runtime.app import build_adapter

    gateway = Gateway(config, admin.store, _no_runner())
    unavailable: dict[str, str] = {}
    for platform in config.enabled_platforms():
        try:
            gateway.register(build_adapter(platform, config, gateway))
        except Exception as exc:  # the change stands; the question's message is said to stay
            unavailable[platform] = f"{platform} could not be set up here ({type(exc).__name__})"
    return gateway, unavailable


def _no_runner() -> AgentRunner:
    """The admin never runs the agent: the gateway it builds for the adapters gets this."""
    from clarigate.gateway.runners.base import AgentRunner, RunInput

    class NoRunner(AgentRunner):
        async def run_turn(self, run: RunInput) -> Any:
            """Refuse: the admin does not run the agent."""
            raise RuntimeError("the admin does not run the agent")

        async def ping(self) -> bool:
            """Never ready: there is no agent here."""
            return False

    return NoRunner()


def _table(result: Any) -> str:
    """Rows as aligned columns; a dict as ``key: value`` lines."""
    if isinstance(result, dict):
        lines = []
        for key, value in result.items():
            if isinstance(value, list) and value and isinstance(value[0], dict):
                lines.append(f"{key}:")
                lines.extend("  " + line for line in _table(value).splitlines())
            else:
                lines.append(f"{key}: {_cell(value)}")
        return "\n".join(lines) + "\n"
    if not result:
        return "(none)\n"
    columns = list(result[0])
    cells = [[_cell(row.get(c)) for c in columns] for row in result]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]

    def render(row: list[str]) -> str:
        return "  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip()

    return "\n".join([render(columns), *(render(row) for row in cells)]) + "\n"


def _cell(value: Any) -> str:
    """One line: a multi-line text (a question) flattened, its lines joined by spaces."""
    if value is None:
        return "-"
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items()) or "-"
    return " ".join(line.strip() for line in str(value).splitlines() if line.strip())
