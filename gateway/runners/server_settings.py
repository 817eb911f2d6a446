"""The ``agent:`` settings on a LangGraph server: which graph the assistant runs, what each run carries.

The assistant runs clarigate's shipped server graph when its context schema names the settings
key (``clarigate.agent.placement.SETTINGS_KEY``); any other graph is "another graph", to which
only the settings the gateway applies itself reach (``clarigate.agent.placement.RULES``), and
who is talking (``clarigate.agent.who``), which every graph gets.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clarigate.agent.placement import SETTINGS_KEY, travelling
from clarigate.agent.settings import AgentOptions
from clarigate.agent.who import Speaker, with_speaker


async def assistant_uuid(client: Any, assistant_id: str) -> str | None:
    """The assistant's id for ``assistant_id`` (an assistant id, or a graph's name), None if none."""
    try:
        return str((await client.assistants.get(assistant_id))["assistant_id"])
    except Exception as exc:
        if getattr(getattr(exc, "response", None), "status_code", None) not in (404, 422):
            raise
    try:
        found = await client.assistants.search(graph_id=assistant_id, limit=1)
    except Exception as exc:
        if getattr(getattr(exc, "response", None), "status_code", None) == 404:  # "Graph '…' not found"
            return None
        raise
    return str(found[0]["assistant_id"]) if found else None


async def graph_schemas(client: Any, assistant_id: str) -> Mapping[str, Any]:
    """The schemas of the assistant's graph (state, context, config); empty when there is none."""
    uuid = await assistant_uuid(client, assistant_id)
    schemas = await client.assistants.get_schemas(uuid) if uuid is not None else None
    return schemas if isinstance(schemas, Mapping) else {}


def runs_shipped_graph(schemas: Mapping[str, Any]) -> bool:
    """True when the graph (its ``schemas``) declares the clarigate settings in its context schema."""
    for key in ("context_schema", "config_schema"):
        schema = schemas.get(key)
        if isinstance(schema, Mapping) and SETTINGS_KEY in (schema.get("properties") or {}):
            return True
    return False


def state_problem(schemas: Mapping[str, Any], assistant_id: str) -> str | None:
    """Why the gateway cannot run the graph (its state has no ``messages`` key), or None; a
    server that does not describe the state is not second-guessed."""
    from clarigate.agent.breakpoints import missing_messages

    state = schemas.get("state_schema")
    keys = state.get("properties") if isinstance(state, Mapping) else None
    if not isinstance(keys, Mapping):
        return None
    return missing_messages(keys, f"the graph of assistant {assistant_id!r}")


def run_settings(
    options: AgentOptions, shipped: bool | None, speaker: Speaker | None = None
) -> dict[str, Any]:
    """What each run is created with: ``recursion_limit`` for any graph; for the shipped graph
    (or one not known yet) the settings that travel; who is talking (``clarigate.agent.who``).

    Both go in the run's ``configurable``, which the server copies into the run's context and
    then filters by the graph's context schema (``langgraph_api``): a graph's ``configurable``
    keeps them whole, and its context gets those its schema declares (all of them without a
    schema). Sent as ``context`` instead, a key the schema does not declare would leave the
    ``configurable`` too, and the server refuses a run with both."""
    configurable: dict[str, Any] = with_speaker(speaker)
    if shipped is not False:
        configurable[SETTINGS_KEY] = travelling(options)
    config: dict[str, Any] = {"recursion_limit": options.recursion_limit}
    if configurable:
        config["configurable"] = configurable
    return {"config": config}
