"""``python mcp_wedge_server.py MARKER PIDS [exit|quit]``: ``mcp_hunt_server.py`` on stdio, or,
once the file MARKER exists, a process that never answers (a server wedged while starting), or
with ``exit`` one that exits at once (a server that fails to start), or with ``quit`` the hunt
server exiting as soon as it is initialized (a server that stops right after it started). Either
appends its pid to the file PIDS first."""

from __future__ import annotations

import os
import runpy
import sys
import time
from pathlib import Path

from mcp.types import InitializedNotification


async def quit_now(_: InitializedNotification) -> None:
    os._exit(4)


if __name__ == "__main__":
    marked, mode = Path(sys.argv[1]).exists(), sys.argv[3:]
    with Path(sys.argv[2]).open("a", encoding="utf-8") as pids:
        pids.write(f"{os.getpid()}\n")
    if marked and mode == ["exit"]:
        print("wedge server: cannot start", file=sys.stderr, flush=True)
        sys.exit(3)
    if marked and mode != ["quit"]:
        time.sleep(3600)
    sys.argv = [str(Path(__file__).with_name("mcp_hunt_server.py"))]
    if not marked:
        runpy.run_path(sys.argv[0], run_name="__main__")
    else:
        hunt = runpy.run_path(sys.argv[0])["server"]
        hunt._mcp_server.notification_handlers[InitializedNotification] = quit_now
        hunt.run(transport="stdio")
