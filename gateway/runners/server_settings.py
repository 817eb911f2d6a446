"""The ``agent:`` settings on a LangGraph server: which graph the assistant runs, what each run carries.

The assistant runs clarigate's shipped server graph when its context schema names the settings
key (``clarigate.agent.placement.SETTINGS_KEY``); any other graph is "another graph", to which
only the settings the gateway applies itself reach (``clarigate.agent.placement.RULES``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clarigate.agent.placement import SETTINGS_KEY, travelling
from clarigate.agent.settings import AgentOptions


async def assistant_uuid(client: Any, assistant_id: str) -> str | None:
    """The assistant's id for ``assistant_id`` (an assistant id, or a graph's name), None if none."""
    try:
        return str((await client.assistants.get(assistant_id))["assistant_id"])
    except Exception as exc:
        if getattr(getattr(exc, "response", None), "status_code", None) not in (404, 422):
            raise
    found = await client.assistants.search(graph_id=assistant_id, limit=1)
    return str(found[0]["assistant_id"]) if found else None


async def runs_shipped_graph(client: Any, assistant_id: str) -> bool:
    """True when the assistant's graph declares the clarigate settings in its context schema."""
    uuid = await assistant_uuid(client, assistant_id)
    if uuid is None:
        return False
    schemas = await client.assistants.get_schemas(uuid)
    for key in ("context_schema", "config_schema"):
        schema = schemas.get(key) if isinstance(schemas, Mapping) else None
        if isinstance(schema, Mapping) and SETTINGS_KEY in (schema.get("properties") or {}):
            return True
    return False


def run_settings(options: AgentOptions, shipped: bool | None) -> dict[str, Any]:
    """What each run is created with: ``recursion_limit`` for any graph, and for the shipped
    graph (or one not known yet) the settings that travel, as the run's context."""
    created: dict[str, Any] = {"config": {"recursion_limit": options.recursion_limit}}
    if shipped is not False:
        created["context"] = {SETTINGS_KEY: travelling(options)}
    return created
