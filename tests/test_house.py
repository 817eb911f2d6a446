"""The house rules a reader relies on: small modules and short functions in the code folders."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CODE = ("agent", "gateway", "adapters")
#: "No module over ~400 lines, no function over ~50": a file read in one sitting, a function on
#: one screen. Split by concept when a change would go past them.
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 50


def sources() -> list[Path]:
    return sorted(p for folder in CODE for p in (REPO / folder).rglob("*.py"))


def test_no_module_is_longer_than_a_sitting() -> None:
    long = [
        f"{p.relative_to(REPO)}: {n}"
        for p in sources()
        if (n := p.read_text().count("\n")) > MAX_MODULE_LINES
    ]
    assert long == []


def test_no_function_is_longer_than_a_screen() -> None:
    long = []
    for path in sources():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name}: {length}")
    assert long == []
