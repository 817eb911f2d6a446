"""``clarigate doctor``: check the configuration, Redis, the checkpointer and each platform."""

from __future__ import annotations

import argparse
import asyncio
import os
from dataclasses import dataclass, field
from typing import TextIO

from clarigate.agent import placement
from clarigate.agent.settings import AgentOptions
from clarigate.gateway.cli.agent_parts import NOT_STARTED_FOR_PARTS, part_problems
from clarigate.gateway.cli.doctor_postgres import postgres_problem, postgres_unusable
from clarigate.gateway.cli.main import listen_port, port_setting
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.runners.base import AgentRunner
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.runners.routed import RoutedRunner
from clarigate.gateway.runners.server import LangGraphServerRunner
from clarigate.gateway.runtime.app import build_adapter, build_runner, store_description
from clarigate.gateway.runtime.config import (
    TRY_CHAT,
    GatewayConfig,
    credential_hints,
    load_config,
    startup_problems,
)
from clarigate.gateway.runtime.identity import identity_clashes, platform_identities
from clarigate.gateway.runtime.preflight import (
    ExitCode,
    StartFailure,
    agent_start_failure,
    first_line,
    metrics_port_clash,
    model_advice,
    not_reachable,
    ping_redis,
    port_problem,
    redis_advice,
)
from clarigate.gateway.runtime.redaction import redact, register_secrets, without_secrets
from clarigate.gateway.runtime.routes import DEFAULT_ROUTE, describe
from clarigate.gateway.runtime.sections import credential_problem

#: Why an agent was not started: notes are printed before the PROBLEM lines they refer to.
NOT_STARTED_FOR_SETTINGS = "not started, since a setting named in a PROBLEM line below does not apply to it"
NOT_STARTED_FOR_MCP = "not started, since an MCP server it needs cannot be used (see its mcp: PROBLEM line)"


@dataclass
class Report:
    """What the checks found: ``ok`` lines, ``notes`` (serve runs with them) and ``problems``."""

    ok: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def write(self, out: TextIO) -> None:
        """Print one line per finding, problems last, and a verdict (each through the log
        redactor: a library's error message may quote a secret)."""
        for line in self.ok:
            out.write(f"ok      {redact(line)}\n")
        for line in self.notes:
            out.write(f"note    {redact(line)}\n")
        for line in self.problems:
            out.write(f"PROBLEM {redact(line)}\n")
        verdict = f"{len(self.problems)} problem(s) found" if self.problems else "everything looks right"
        out.write(f"\n{verdict}\n")


async def run_checks(config_path: str | None) -> Report:
    """Every check, collected (never raises for a configuration problem)."""
    report = Report()
    # the file load_config reads: --config, else CLARIGATE_CONFIG (how the image and Kubernetes
    # name it), said as such
    from_env = None if config_path else os.environ.get("CLARIGATE_CONFIG") or None
    try:
        config = load_config(config_path or from_env)
    except ValueError as exc:
        report.problems.append(f"config: {exc}")
        return report
    register_secrets(config.secret_values())
    read = f"{from_env} (CLARIGATE_CONFIG)" if from_env else config_path
    report.ok.append(
        f"config: {read or 'no config file (defaults and environment)'}, bot id {config.bot_id!r}"
    )
    report.notes.extend(f"config: {warning}" for warning in config.warnings)  # serve runs: no PROBLEM
    _check_port(config, report)
    store_answers = await _check_store(config, report)
    runner = build_runner(config)
    try:
        agents = runner.runners if isinstance(runner, RoutedRunner) else {DEFAULT_ROUTE: runner}
        for name, agent in agents.items():
            route = next((r for r in config.routes if r.name == name), None)
            options = route.options(config.agent) if route is not None else config.agent
            await _check_one_agent(config, options, agent, report, "agent" if route is None else name)
        await _check_platforms(config, runner, report)
    finally:
        await runner.aclose()
    if store_answers:
        await _check_identity(config, report)
    _check_startup(config, report)
    return report


def _check_startup(config: GatewayConfig, report: Report) -> None:
    """Every line that stops ``serve`` at start (``startup_problems``), as a config problem;
    a line the checks above already said (as it is, or after a prefix of theirs, such as
    ``settings: …``) is not said twice."""
    for line in startup_problems(config):
        if not any(said == line or said.endswith(f": {line}") for said in report.problems):
            report.problems.append(f"config: {line}")


async def _check_one_agent(
    config: GatewayConfig, options: AgentOptions, runner: AgentRunner, report: Report, name: str
) -> None:
    """The ``agent:`` section's agent (``name`` "agent") or a route's: its settings apply where
    it runs, and it starts (a LangGraph server answers with the assistant)."""
    label = "agent" if name == "agent" else f"route {name}"
    unapplied = placement.problems(options, placement.place_of(options))
    prefix = "settings" if name == "agent" else f"routes.{name}"
    report.problems.extend(f"{prefix}: {line}" for line in unapplied)
    if unapplied:
        report.notes.append(f"{label}: {NOT_STARTED_FOR_SETTINGS}")
    elif isinstance(runner, LangGraphServerRunner):
        await _check_agent_server(runner, report, label)
    else:
        from clarigate.agent.tool_names import check_listed

        answered, found = await _check_mcp(options, report)
        broken = part_problems(options, label)  # each part on its own: all of them said
        report.problems += broken
        names = check_listed(options, found)
        report.problems += [f"{prefix}: {line}" for line in names.problems]
        report.notes += [f"{prefix}: {line}" for line in names.notes]
        starts = not (names.problems or broken) and answered
        usable = await _check_checkpointer(config, options, report, label, said_ok=not starts)
        if names.problems:
            report.notes.append(f"{label}: {NOT_STARTED_FOR_SETTINGS}")
        elif broken:
            report.notes.append(f"{label}: {NOT_STARTED_FOR_PARTS}")
        elif not answered:
            report.notes.append(f"{label}: {NOT_STARTED_FOR_MCP}")
        elif usable:
            await _check_agent(config, options, runner, report, label)  # type: ignore[arg-type]


def _check_port(config: GatewayConfig, report: Report) -> None:
    """$PORT as ``serve`` would take it (``serve --port`` overrides it; doctor has no flag), and
    ``metrics_port`` beside it, in ``serve``'s words."""
    try:
        port = listen_port(port_setting())
    except argparse.ArgumentTypeError:
        report.problems.append(f"port: PORT {port_setting()!r} is not a port number (1-65535)")
        return
    problem = port_problem(port, variable=True)
    if problem is None and config.metrics_port == port:
        problem = metrics_port_clash(port)
    if problem is not None:
        report.problems.append(f"port: {problem}")


async def _check_store(config: GatewayConfig, report: Report) -> bool:
    """Redis (REDIS_URL) answers the store; True when it does."""
    if not config.redis_url:
        report.notes.append(f"store: {store_description(config)}; set REDIS_URL for restarts and replicas")
        return False
    problem = await redis_problem(config.redis_url, f"store: {store_description(config)}")
    if problem is not None:
        report.problems.append(problem)
        return False
    report.ok.append(f"store: {store_description(config)}")
    return True


async def _check_identity(config: GatewayConfig, report: Report) -> None:
    """Each platform's identity against the one recorded under the bot id, as ``serve`` checks
    them at start (and stops, exit 9), in its words. Read only: doctor records nothing."""
    from clarigate.gateway.store.connection import open_redis

    client = open_redis(config.redis_url or "", retries=0, parsed_replies=True)
    try:
        ours = await asyncio.wait_for(platform_identities(config), 15)
        clashes = await asyncio.wait_for(identity_clashes(client, config.bot_id, ours), 5)
    except Exception as exc:  # serve checks them at start all the same
        report.notes.append(
            f"identity: the identities under bot id {config.bot_id!r} not checked: {first_line(exc)}"
        )
        return
    finally:
        await client.aclose()
    report.problems.extend(f"identity: {clash}" for clash in clashes)


async def redis_problem(url: str, where: str | None = None) -> str | None:
    """Why Redis at ``url`` cannot serve the store, in ``serve``'s words (a URL no client can use,
    a refusal, or why it is not reachable: refused, TLS, timeout, Sentinel), or None when it
    answers; ``where`` names it (``store: Redis at …``)."""
    from clarigate.gateway.store.connection import open_redis

    where = where or f"store: Redis at {without_secrets(url)}"
    try:
        client = open_redis(url, retries=0)
    except Exception as exc:  # a URL the store cannot use at all
        return f"store: REDIS_URL cannot be used: {first_line(exc)}"
    try:
        reason = await ping_redis(client, where)
    except StartFailure as exc:  # it answered, and refused us (password, ACL, database index)
        return exc.message
    finally:
        await client.aclose()
    return None if reason is None else not_reachable(where, reason, redis_advice(url))


async def _check_mcp(options: AgentOptions, report: Report) -> tuple[bool, dict[str, list[str] | None]]:
    """Start each MCP server of ``agent.mcp_servers`` and list its tools: False if one fails or
    names clash, and ``{server: its tools as offered, or None when it did not answer}``."""
    servers = options.mcp_servers
    if not servers:
        return True, {}
    from clarigate.agent.mcp import name_problems
    from clarigate.agent.mcp_sessions import server_tool_names

    found = await server_tool_names(servers)
    for name, tools in found.items():
        if isinstance(tools, Exception):
            report.problems.append(f"mcp: {tools}")
        else:
            report.ok.append(
                f"mcp: server {name!r}: {len(tools)} tool(s) ({', '.join(sorted(tools)) or 'none'})"
            )
    clashes = name_problems({name: tools for name, tools in found.items() if isinstance(tools, list)})
    report.problems += [f"mcp: {clash}" for clash in clashes]
    listed = {name: tools if isinstance(tools, list) else None for name, tools in found.items()}
    return not clashes and None not in listed.values(), listed


async def _check_agent_server(runner: LangGraphServerRunner, report: Report, label: str = "agent") -> None:
    """The LangGraph server: it answers, takes the API key, and has the assistant."""
    problems = await runner.check()
    if problems:
        # the server answered and has the assistant: what is left are settings that do not apply
        kind = ("settings" if label == "agent" else label) if runner.shipped is not None else label
        report.problems.extend(f"{kind}: {problem}" for problem in problems)
    else:
        assistant = runner.settings.assistant_id
        report.ok.append(f"{label}: LangGraph server at {runner.url}, assistant {assistant!r}")


async def _check_checkpointer(
    config: GatewayConfig, agent: AgentOptions, report: Report, label: str, said_ok: bool
) -> bool:
    """The checkpointer's PostgreSQL, started agent or not (it needs no model), in one direct
    attempt (the pool only gives up waiting); False when unusable, ``said_ok``: ok when it answers."""
    url = agent.checkpointer_url or ""
    if not url.startswith(("postgresql://", "postgres://")):
        return True
    where = without_secrets(url)
    failure = await postgres_problem(url)
    if failure is not None:
        await postgres_unusable(config, url, where, failure, report, label)
        return False
    if said_ok:
        report.ok.append(f"checkpointer: {where}")
    return True


async def _check_agent(
    config: GatewayConfig, agent: AgentOptions, runner: LangGraphRunner, report: Report, label: str
) -> None:
    """The agent starts (its checkpointer's PostgreSQL answered) and its checkpointer answers."""
    where = checkpointer_where(agent.checkpointer_url, config.data_dir)
    what = f"model {agent.model!r}" if label == "agent" and not agent.graph else describe(agent)
    try:
        await runner.start()
    except Exception as exc:  # in serve's words: a setting it names, or the model's advice
        said = agent_start_failure(exc, agent.model, data_dir=str(config.data_dir), graph=agent.graph)
        if said.code != ExitCode.MODEL:
            report.problems.append(f"{label}: {said.message}")
            return
        section = "agent" if label == "agent" else f"routes.{label.removeprefix('route ')}.agent"
        report.problems.append(
            f"{label}: {what} with checkpointer {where}: {first_line(exc)} ({model_advice(section)})"
        )
        return
    if await runner.ping():
        report.ok.append(f"{label}: {what}, checkpointer {where}")
    else:
        report.problems.append(f"checkpointer: {where} does not answer")


def checkpointer_where(url: str | None, data_dir: str) -> str:
    """The checkpointer as ``serve`` opens it: a SQLite file by its absolute path (a relative data
    directory or ``sqlite:relative.db`` is taken from the directory serve starts in, as here)."""
    from clarigate.agent.checkpoint import sqlite_path

    path = sqlite_path(url, data_dir)
    if path is None or str(path) == ":memory:":
        return without_secrets(url or "")
    where = f"SQLite {os.path.abspath(path)}"
    return where if url else f"{where} (in the data directory, CLARIGATE_DATA_DIR)"


async def _check_platforms(config: GatewayConfig, runner: AgentRunner, report: Report) -> None:
    enabled = config.enabled_platforms()
    half_set = False
    for name, platform in config.known_platforms().items():
        section = config.platform(name)
        assert section is not None
        if section.enabled is False:
            report.notes.append(f"{name}: disabled in the configuration")
            continue
        problem = credential_problem(platform, section)
        if problem:
            report.problems.append(problem)
            half_set = True  # its PROBLEM line says what it needs: no note to set it as well
            continue
        if name not in enabled:
            continue
        try:
            adapter = build_adapter(name, config, Gateway(config, _NoStore(), runner))  # type: ignore[arg-type]
            problems = await asyncio.wait_for(adapter.check(), 15)
        except Exception as exc:
            problems = [f"the adapter could not be checked: {exc}"]
        if problems:
            report.problems.extend(f"{name}: {problem}" for problem in problems)
        else:
            report.ok.append(f"{name}: credentials accepted")
    if not enabled and not half_set:
        report.notes.append(f"no platform is enabled: set {credential_hints(config)} (try {TRY_CHAT} first)")


class _NoStore:
    """Adapters are only checked, never started: they get a store that is never used."""

    def __getattr__(self, name: str) -> None:
        raise RuntimeError("doctor does not use the store through adapters")


def doctor_main(config_path: str | None, out: TextIO) -> int:
    """Run the checks, print the report; 1 when there are problems."""
    report = asyncio.run(run_checks(config_path))
    report.write(out)
    return 1 if report.problems else 0
