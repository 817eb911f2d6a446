"""Files that hold conversations at rest are the owner's alone.

The default checkpointer's SQLite file, the messages kept on disk during a store outage and
``clarigate chat``'s log and thread file hold what people wrote. Created with the process's
umask (often 022), they would be readable by every account on the host. ``private_file``
creates such a file owner-only (0600) before its library opens it: SQLite gives its ``-wal``,
``-shm`` and journal files the database file's permissions, and a file opened to append keeps
its own. A directory it creates is owner-only too (0700). What already exists is left as it
is: an operator's volume or a file they set up keeps the permissions they gave it.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

FILE_MODE = 0o600
DIR_MODE = 0o700


def private_file(path: Path) -> Path:
    """``path`` made, owner-only, if it does not exist yet (its missing folders too); ``path``.
    ``IsADirectoryError`` (naming ``path``) when a folder is there: no library can use it as a
    file, and would say less (SQLite: "unable to open database file")."""
    missing, folder = [], path.parent
    while not folder.exists():  # up to the nearest folder that exists, no further
        missing.append(folder)
        folder = folder.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=DIR_MODE)
        except FileExistsError:  # made meanwhile by another process
            pass
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
    except FileExistsError:
        if path.is_dir():
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path)) from None
    return path
