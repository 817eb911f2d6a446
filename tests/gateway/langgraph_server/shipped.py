"""A ``langgraph dev`` serving clarigate's shipped server graph (``agent``) next to a test graph of
its own (``asker``), with the tools its environment names (``CLARIGATE_AGENT__TOOLS``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from langchain_core.tools import tool

from .process import HERE, LangGraphServer

REPO = HERE.parents[2]
TOOLS = '["tests.gateway.langgraph_server.shipped:delete_data"]'


@tool
def delete_data(target: str) -> str:
    """Delete the named data set."""
    with Path(os.environ["TOOL_LOG"]).open("a", encoding="utf-8") as log:
        log.write(f"delete_data {target}\n")
    return f"deleted {target}"


class ShippedGraphServer(LangGraphServer):
    """``agent``: ``clarigate.agent.server_graph:graph``; ``asker``: another graph."""

    def __init__(self, workdir: Path) -> None:
        super().__init__(workdir)
        graphs = {"agent": "clarigate.agent.server_graph:graph", "asker": f"{HERE / 'graphs.py'}:asker"}
        self.config.write_text(json.dumps({"dependencies": [str(HERE)], "graphs": graphs}))

    def start(self) -> None:
        """Start it with the repository importable and the server graph's tools in its environment."""
        saved = {name: os.environ.get(name) for name in ("PYTHONPATH", "CLARIGATE_AGENT__TOOLS")}
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), saved["PYTHONPATH"]) if p)
        os.environ["CLARIGATE_AGENT__TOOLS"] = TOOLS
        try:
            super().start()
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
