"""A destructive tool for approval tests, recording exactly the arguments it ran with.

Its parameters are typed ``Any`` so LangChain's argument validation passes values through
as they are: a ``dry_run`` that arrived as ``"false"`` or ``0`` is recorded as such, not
coerced into the bool the signature would ask for.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CALLS: list[dict[str, Any]] = []

ARGS: dict[str, Any] = {
    "table": "test_data",
    "dry_run": True,
    "limit": 100,
    "tags": ["old", "tmp"],
    "before": "2026-01-31",
}
#: The model's turn that asks for the call (the scripted model's shape).
DELETE_TURN = {"tool_calls": [{"name": "delete_records", "args": ARGS}]}
TOOL = "tests.agent.approval_tools:delete_records"


def delete_records(table: Any, tags: Any, before: Any, dry_run: Any = True, limit: Any = 100) -> str:
    """Delete up to ``limit`` records of ``table`` tagged ``tags`` and older than ``before``;
    with ``dry_run`` only count them."""
    CALLS.append({"table": table, "dry_run": dry_run, "limit": limit, "tags": tags, "before": before})
    return f"{'would delete' if dry_run else 'deleted'} {limit} from {table}"


def typed(value: Any) -> Any:
    """``value`` with its types spelled out, so ``1``, ``1.0`` and ``True`` differ."""
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed(v) for v in value]
    return (type(value).__name__, value)


def approval_runner(folder: Path) -> Any:
    """An in-process runner whose scripted model asks for ``delete_records(**ARGS)`` under
    ``require_approval`` (approve, edit, reject), then says "Finished."."""
    from clarigate.agent.settings import AgentSettings
    from clarigate.gateway.runners.in_process import LangGraphRunner

    script = folder / "script.json"  # JSON keeps the arguments' order (the form's fields')
    script.write_text(json.dumps([DELETE_TURN, {"content": "Finished."}]))
    return LangGraphRunner(
        AgentSettings(
            model=f"scripted:{script}",
            checkpointer_url="memory://",
            tools=(TOOL,),
            require_approval={"delete_records": ["approve", "edit", "reject"]},
        )
    )


#: What ``post_announcement`` really posted.
ANNOUNCED: list[str] = []
ANNOUNCE_TOOL = "tests.agent.approval_tools:post_announcement"


def post_announcement(text: str) -> str:
    """Post ``text`` to the whole team's channel."""
    ANNOUNCED.append(text)
    return f"posted: {text}"
