"""``python mcp_wedge_server.py MARKER PIDS [exit]``: ``mcp_hunt_server.py`` on stdio, or, once
the file MARKER exists, a process that never answers (a server wedged while starting), or with
``exit`` one that exits at once (a server that fails to start). Either appends its pid to the
file PIDS first."""

from __future__ import annotations

import os
import runpy
import sys
import time
from pathlib import Path

if __name__ == "__main__":
    with Path(sys.argv[2]).open("a", encoding="utf-8") as pids:
        pids.write(f"{os.getpid()}\n")
    if Path(sys.argv[1]).exists():
        if sys.argv[3:] == ["exit"]:
            print("wedge server: cannot start", file=sys.stderr, flush=True)
            sys.exit(3)
        time.sleep(3600)
    sys.argv = [str(Path(__file__).with_name("mcp_hunt_server.py"))]
    runpy.run_path(sys.argv[0], run_name="__main__")
