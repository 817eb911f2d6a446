"""What an operator names in the ``agent:`` settings, loaded: tools, instructions, a graph.

Import paths are ``package.module:name`` and are imported the usual way, so ``PYTHONPATH``
works. Every failure is a ``ValueError`` that names what could not be loaded.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool


def import_path(path: str, what: str = "object") -> Any:
    """The object ``module:attribute`` names; ``ValueError`` saying why it cannot be had."""
    module_name, _, attribute = path.strip().partition(":")
    if not module_name or not attribute:
        raise ValueError(f"{what} {path!r} is not an import path of the form package.module:name")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"{what} {path!r}: cannot import {module_name}: {exc}") from exc
    target: Any = module
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise ValueError(f"{what} {path!r}: {module_name} has no {attribute!r}") from None
    return target


def as_tool(obj: Any, path: str = "") -> BaseTool:
    """A LangChain tool as is, or a plain typed function (sync or async) made into one.

    The function's name, docstring and type hints become the tool's name, description and
    argument schema, as ``@tool`` would make them.
    """
    if isinstance(obj, BaseTool):
        return obj
    if callable(obj) and not inspect.isclass(obj):
        if inspect.iscoroutinefunction(obj):
            return StructuredTool.from_function(coroutine=obj)
        return StructuredTool.from_function(func=obj)
    raise ValueError(f"tool {path or obj!r} is neither a LangChain tool nor a function")


def load_tools(paths: Sequence[str]) -> list[BaseTool]:
    """The tools ``paths`` name (a path may also name a list of tools)."""
    tools: list[BaseTool] = []
    for path in paths:
        obj = import_path(path, "tool")
        items = obj if isinstance(obj, list | tuple) else [obj]
        tools.extend(as_tool(item, path) for item in items)
    names = [t.name for t in tools]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise ValueError(f"tools: more than one tool is named {', '.join(duplicated)}")
    return tools


def load_instructions(value: str | None) -> str:
    """``agent.instructions``: the text itself, or the contents of the file it names."""
    if not value or not value.strip():
        return ""
    text = value.strip()
    if "\n" not in text and len(text) < 1024:
        candidate = Path(text).expanduser()
        if candidate.suffix.lower() in (".md", ".txt", ".markdown", ".prompt") or candidate.is_file():
            try:
                return candidate.read_text(encoding="utf-8").strip()
            except OSError as exc:
                raise ValueError(f"agent.instructions: cannot read {text}: {exc.strerror or exc}") from exc
    return text


def load_graph(path: str, checkpointer: Any) -> Any:
    """``agent.graph``: a compiled LangGraph graph, or a factory taking the checkpointer.

    A compiled graph without a checkpointer is given the gateway's (threads need one); a
    graph compiled with its own keeps it. A graph whose state has no ``messages`` key is a
    ``ValueError`` saying what the gateway needs.
    """
    obj = import_path(path, "agent.graph")
    if _is_compiled(obj):
        graph = obj
    elif callable(obj):
        try:
            graph = obj(checkpointer)
        except TypeError:
            graph = obj()  # a factory without parameters
        if inspect.isawaitable(graph):
            raise ValueError(f"agent.graph {path!r}: the factory must return the graph, not a coroutine")
    else:
        raise ValueError(f"agent.graph {path!r} is neither a compiled graph nor a factory")
    if not _is_compiled(graph):
        raise ValueError(f"agent.graph {path!r} did not give a compiled graph (call .compile() on it)")
    from clarigate.agent.breakpoints import missing_messages

    if problem := missing_messages(graph.channels, f"agent.graph {path!r}"):
        raise ValueError(problem)
    if getattr(graph, "checkpointer", None) in (None, False):
        graph = graph.copy(update={"checkpointer": checkpointer})
    return graph


def _is_compiled(obj: Any) -> bool:
    from langgraph.pregel import Pregel

    return isinstance(obj, Pregel)
