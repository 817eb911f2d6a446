"""``clarigate doctor``'s look at the built-in agent's parts, each on its own: the instructions
file, each tool, the model. Starting the agent stops at the first that cannot be had; doctor
names every one (and starts the agent only when they all load)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from clarigate.agent.settings import AgentOptions
from clarigate.gateway.runtime.preflight import first_line, model_advice

#: Why an agent was not started: notes are printed before the PROBLEM lines they refer to.
NOT_STARTED_FOR_PARTS = "not started, since a part named in a PROBLEM line below cannot be loaded"


def part_problems(options: AgentOptions, label: str) -> list[str]:
    """One line per part of the built-in agent (``label``: "agent" or "route <name>") that does
    not load: its instructions file, each of its tools, its model (id, provider package, key).
    Nothing for an operator's graph (``agent.graph``): starting it says what is wrong."""
    if options.graph is not None:
        return []
    from clarigate.agent.loading import load_instructions, load_tools
    from clarigate.agent.models import build_chat_model

    parts: list[Callable[[], Any]] = [partial(load_instructions, options.instructions)]
    parts += [partial(load_tools, [path]) for path in options.tools]
    problems = [f"{label}: {said}" for said in map(_failure, parts) if said]
    said = _failure(partial(build_chat_model, options.model))
    if said:  # the model named once, with what to check
        section = "agent" if label == "agent" else f"routes.{label.removeprefix('route ')}.agent"
        named = "" if repr(options.model) in said else f"model {options.model!r}: "
        problems.append(f"{label}: {named}{said} ({model_advice(section)})")
    return problems


def _failure(load: Callable[[], Any]) -> str:
    """Why ``load`` fails, in its own words (one line), or ``""``."""
    try:
        load()
    except Exception as exc:  # each part says what is wrong with it
        return first_line(exc)
    return ""
