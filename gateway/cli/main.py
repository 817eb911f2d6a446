"""The ``clarigate`` command: ``serve`` a bot, ``doctor`` its setup, ``chat`` in the terminal.

Heavy modules (uvicorn, the SDKs, LangChain) are imported inside the command that needs
them, so a Ctrl-C while they load ends the command cleanly instead of with a traceback.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import TYPE_CHECKING

import clarigate
from clarigate.gateway.runtime.logs import LEVELS

if TYPE_CHECKING:
    from clarigate.gateway.runtime.config import GatewayConfig


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``clarigate`` console script."""
    parser = argparse.ArgumentParser(
        prog="clarigate", description="A chat-platform gateway for agents that ask before they guess."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {clarigate.__version__}")
    # not required: alone, ``clarigate`` shows the help rather than "arguments are required: command"
    commands = parser.add_subparsers(title="commands", dest="command", metavar="COMMAND")
    for name, text in (
        ("serve", "run the bot's HTTP server and workers"),
        ("doctor", "check the configuration, Redis, the checkpointer and each platform"),
        ("chat", "talk to the agent in this terminal (no platform needed)"),
    ):
        command = commands.add_parser(name, help=text, description=text)
        command.add_argument("--config", help="the bot's YAML file (default: $CLARIGATE_CONFIG)")
        if name == "serve":
            _serve_options(command)
    from clarigate.gateway.cli.admin import add_admin_parser

    add_admin_parser(commands)
    args = parser.parse_args(argv)
    if args.command is None:  # nothing to do: what there is to do, and a usage error's status
        parser.print_help(sys.stderr)
        return 2
    try:
        if args.command != "serve":
            return _run(args)
        from clarigate.gateway.runtime.stopping import stop_signals

        with stop_signals():  # before anything else loads: a stop from now on ends the start cleanly
            return _run(args)
    except KeyboardInterrupt:
        # leaving the chat with Ctrl-C is normal; elsewhere it is the usual 130
        return 0 if args.command == "chat" else 130


def _serve_options(command: argparse.ArgumentParser) -> None:
    """``serve``'s own options."""
    command.add_argument("--host", default="0.0.0.0", help="address to listen on (default 0.0.0.0)")
    # unset: $PORT, checked once the command runs, so that a bad one is named as PORT
    command.add_argument("--port", type=listen_port, help="default $PORT or 8080")
    command.add_argument(
        "--log-format",
        type=str.lower,
        choices=("text", "json"),
        help="default: log_format from config",
    )
    command.add_argument(
        "--log-level",
        type=str.lower,
        choices=LEVELS,
        help="default: log_level from config ($CLARIGATE_LOG_LEVEL), else info; "
        "debug also prints the traceback of a failed start",
    )
    command.add_argument(
        "--role",
        choices=("auto", "all", "web", "worker"),
        help="default: role from config ($CLARIGATE_ROLE), else auto: with Redis a web process "
        "(HTTP, platforms) and worker processes (agent runs; worker_processes, by default one "
        "per core, at most 4), else one process doing both",
    )
    # a worker process started by a web process: its health socket and liveness pipe
    command.add_argument("--supervised-by", help=argparse.SUPPRESS)


def port_setting() -> str:
    """$PORT as ``serve`` reads it: unset or empty means 8080."""
    return os.environ.get("PORT") or "8080"


def listen_port(text: str) -> int:
    """``--port`` / $PORT as ``serve`` takes it (argparse's ``type``; ``doctor`` checks $PORT with it)."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None


def port_from_environment(args: argparse.Namespace) -> bool:
    """``serve``'s port from $PORT when ``--port`` is not given; False (said in one line naming
    PORT, as a configuration error) when $PORT is not a whole number or not a port (0 is one
    only for ``--port``)."""
    if args.command != "serve" or args.port is not None:
        return True
    try:
        args.port = listen_port(port_setting())
    except argparse.ArgumentTypeError:
        say_failure(args, f"PORT {port_setting()!r} is not a port number (1-65535)")
        return False
    from clarigate.gateway.runtime.preflight import port_problem

    problem = port_problem(args.port, variable=True)  # PORT=0: refused, not any free port
    if problem is not None:
        say_failure(args, problem)
    return problem is None


def say_failure(args: argparse.Namespace, message: str, asked: str | None = None) -> None:
    """A start refused before the configuration is read, in one line on stderr: ``clarigate: …``,
    or for a ``serve`` that logs JSON (``--log-format``, else $CLARIGATE_LOG_FORMAT: the image's
    default, else ``asked``: the YAML's log_format, read even when the rest does not validate) a
    JSON log line like every other, so that a log pipeline can read it."""
    chosen = getattr(args, "log_format", None) or os.environ.get("CLARIGATE_LOG_FORMAT") or asked or ""
    if args.command != "serve" or chosen.strip().lower() != "json":
        print(f"clarigate: {message}", file=sys.stderr)
        return
    from clarigate.gateway.runtime.logs import setup_logging

    setup_logging("json", level=logging.ERROR)
    logging.getLogger("clarigate.gateway.cli.main").error("cannot start: %s", message)


def _run(args: argparse.Namespace) -> int:
    from clarigate.gateway.boundary.registry import token_shapes
    from clarigate.gateway.runtime.config import ConfigError, load_config
    from clarigate.gateway.runtime.logs import level_from, setup_logging
    from clarigate.gateway.runtime.redaction import register_secrets, register_token_shapes

    if args.command == "doctor":
        from clarigate.gateway.cli.doctor import doctor_main

        setup_logging("text", level=logging.ERROR)  # the report is the output
        return doctor_main(args.config, sys.stdout)
    if not port_from_environment(args):
        return 2
    try:
        config = load_config(args.config)
    except ValueError as exc:  # a ConfigError, with the YAML's log_format when it could be read
        say_failure(args, str(exc), exc.log_format if isinstance(exc, ConfigError) else None)
        return 2
    register_secrets(config.secret_values())
    register_token_shapes(token_shapes(config.extra_adapters))
    if args.command == "admin":
        from clarigate.gateway.cli.admin import admin_main

        setup_logging("text", level=logging.WARNING)
        return admin_main(config, args)
    if args.command == "chat":
        from clarigate.gateway.cli.chat import chat_main

        return chat_main(config)
    level = level_from(args.log_level or config.log_level)
    setup_logging(args.log_format or config.log_format, level=level)
    from clarigate.gateway.runtime.processes import prepare_metrics_directory, remove_metrics_directory

    made = prepare_metrics_directory()  # before anything imports prometheus_client
    try:
        return _serve(args, config, level)
    finally:
        remove_metrics_directory(made)


def _serve(args: argparse.Namespace, config: GatewayConfig, level: int) -> int:
    from clarigate.gateway.runtime.serve import serve

    if args.role:
        config = config.model_copy(update={"role": args.role})
    # what a worker process started by this one is given as well
    worker_args = [
        f"--{name.replace('_', '-')}={value}"
        for name in ("config", "log_format", "log_level")
        if (value := getattr(args, name)) is not None
    ]
    return serve(
        config,
        args.host,
        args.port,
        debug=level <= logging.DEBUG,
        worker_args=worker_args,
        supervised_by=args.supervised_by,
    )


if __name__ == "__main__":
    sys.exit(main())
