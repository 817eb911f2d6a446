"""The built-in agent as a graph a LangGraph server can serve (``deploy/langgraph/langgraph.json``).

The server keeps threads and checkpoints itself, so the graph is compiled without a
checkpointer. The model comes from ``LLM_MODEL`` as for ``clarigate serve`` (default:
the offline demo model), so ``agent.server_url`` can point a bot at it with nothing else set.
"""

from __future__ import annotations

import os

from clarigate.agent.graph import build_agent_graph
from clarigate.agent.models import build_chat_model

graph = build_agent_graph(build_chat_model(os.environ.get("LLM_MODEL") or "offline"))
