"""Tool names in the settings, checked against the tools the built-in agent is offered.

``require_approval`` and ``idempotent_tools`` name tools; a name no tool has would never apply
(an approval that is never asked), so it stops the start, naming the setting, the name and the
closest tool names. A server with ``tool_name_prefix: true`` offers its ``ping`` as ``h_ping``:
``require_approval: [ping]`` gates ``h_ping`` when no tool is named ``ping`` and one prefixed
server alone has it (written as the server names it, it is meant to be asked); two servers with
it is refused, naming both. ``idempotent_tools`` takes only the names the model is offered (a
tool run again after a crash is not guessed). ``clarigate doctor`` says the same lines, and
leaves a name it cannot tell (a server that did not answer may have it) to a note.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from clarigate.agent.settings import AgentOptions

#: How many tool names a refusal lists when none is close to the name written.
SHOWN = 6


@dataclass(frozen=True)
class Offered:
    """The tools the model is offered, and the names prefixed servers' tools have on their server."""

    names: frozenset[str]
    own: dict[str, list[str]] = field(default_factory=dict)  # ``ping`` -> [``h_ping``]

    @classmethod
    def of(cls, names: Iterable[str], prefixed: Collection[str]) -> Offered:
        """``names`` offered (MCP tools as offered), ``prefixed``: the servers that prefix theirs."""
        offered = frozenset(names)
        own: dict[str, list[str]] = {}
        for name in sorted(offered):
            for server in prefixed:
                if name.startswith(f"{server}_") and len(name) > len(server) + 1:
                    own.setdefault(name[len(server) + 1 :], []).append(name)
        return cls(offered, own)


@dataclass
class Checked:
    """``require_approval`` as offered tool names, what stops the start, and what is said."""

    approvals: dict[str, Any]
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # ``ping`` taken as ``h_ping``; names not checked


def check_tool_names(options: AgentOptions, tools: Iterable[str], silent: Collection[str] = ()) -> Checked:
    """Each name of ``require_approval`` and ``idempotent_tools`` against the ``tools`` offered
    (MCP tools as offered); ``silent``: servers that did not answer (a name they may have is a
    note, not a problem)."""
    prefixed = [name for name, server in options.mcp_servers.items() if server.get("tool_name_prefix")]
    offered = Offered.of(tools, prefixed)
    checked = Checked({})
    for name, decisions in options.require_approval.items():
        target = _approval_target(name, offered, checked, bool(silent))
        if target is None:
            continue
        if checked.approvals.get(target, decisions) != decisions:
            checked.problems.append(
                f"agent.require_approval: {name!r} is {target}, also listed with other decisions: keep one"
            )
        checked.approvals[target] = decisions
    for name in options.idempotent_tools:
        if name not in offered.names:
            _unknown("agent.idempotent_tools", name, offered, checked, bool(silent))
    return checked


def _approval_target(name: str, offered: Offered, checked: Checked, silent: bool) -> str | None:
    """The offered tool ``name`` gates, or None (a problem or an unchecked name, recorded)."""
    if name in offered.names:
        return name
    under = offered.own.get(name, [])
    if len(under) == 1:
        checked.notes.append(f"agent.require_approval: {name!r} gates {under[0]} (the server's {name})")
        return under[0]
    if under:
        checked.problems.append(
            f"agent.require_approval: {name!r} is a tool of several MCP servers "
            f"(offered as {', '.join(under)}): write the one(s) to ask for"
        )
        return None
    _unknown("agent.require_approval", name, offered, checked, silent)
    return None


def _unknown(setting: str, name: str, offered: Offered, checked: Checked, silent: bool) -> None:
    """Record ``name`` of ``setting``, which no offered tool has, with the closest tool names."""
    if silent:
        checked.notes.append(
            f"{setting}: {name!r} not checked: an MCP server that did not answer may offer it"
        )
        return
    if not offered.names:
        checked.problems.append(f"{setting}: no tool is named {name!r}; the agent has no tools")
        return
    spelt = {n: n for n in offered.names} | {own: under[0] for own, under in offered.own.items()}
    near = dict.fromkeys(spelt[n] for n in difflib.get_close_matches(name, list(spelt), n=3, cutoff=0.5))
    listed = list(near) or sorted(offered.names)[:SHOWN]
    more = "" if near or len(offered.names) <= SHOWN else ", …"
    which = "closest" if near else "its tools"
    checked.problems.append(f"{setting}: no tool is named {name!r} ({which}: {', '.join(listed)}{more})")


def check_listed(options: AgentOptions, found: Mapping[str, list[str] | None]) -> Checked:
    """``clarigate doctor``'s check: ``found``, each server's tools as offered (None: it did not
    answer), with the agent's own tools, imported here (when they do not import, nothing is
    checked: the agent's start says why)."""
    from clarigate.agent.loading import load_tools

    if options.graph is not None or not (options.require_approval or options.idempotent_tools):
        return Checked(dict(options.require_approval))
    try:
        names = [tool.name for tool in load_tools(options.tools)]
    except Exception:
        return Checked(dict(options.require_approval))
    names += [name for tools in found.values() if tools for name in tools]
    return check_tool_names(options, names, [server for server, tools in found.items() if tools is None])
