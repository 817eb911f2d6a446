"""A tool with a side effect for ``bench/cluster_faults.py``: every call is one line in a file.

Named in the replicas' ``agent.tools`` (``bench.cluster_tool:note``); the file is
``CLUSTER_TOOL_LOG``. Each call appends one JSON line (one ``write`` on a file opened for
appending, so lines of several processes do not mix): the harness counts the calls per message.
"""

from __future__ import annotations

import json
import os


def note(text: str) -> str:
    """Write ``text`` down (once per call)."""
    line = json.dumps({"text": text, "pid": os.getpid()}) + "\n"
    fd = os.open(os.environ["CLUSTER_TOOL_LOG"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)
    return "noted"
