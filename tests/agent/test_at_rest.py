"""Files holding conversations at rest are owner-only (``agent/at_rest.py``): the SQLite
checkpointer's, the kept messages', ``clarigate chat``'s; what already exists keeps its mode."""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from clarigate.agent.at_rest import private_file
from clarigate.agent.checkpoint import open_checkpointer
from clarigate.gateway.cli.chat import chat_main
from clarigate.gateway.flow.kept import Spool
from clarigate.gateway.runtime.config import GatewayConfig


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    """A host's usual umask (022): files it makes are readable by every account unless set."""
    before = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(before)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def modes(folder: Path) -> dict[str, int]:
    return {path.name: mode(path) for path in sorted(folder.iterdir())}


async def test_a_sqlite_checkpointer_in_new_folders_is_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "var" / "bot" / "threads.db"
    checkpointer = await open_checkpointer(f"sqlite:{path}", str(tmp_path / "unused"))
    try:
        assert await checkpointer.ping()
    finally:
        await checkpointer.aclose()
    assert mode(tmp_path / "var") == 0o700 and mode(tmp_path / "var" / "bot") == 0o700
    assert "threads.db" in modes(path.parent)
    assert set(modes(path.parent).values()) == {0o600}  # the WAL and its index too, when there


def test_kept_messages_are_owner_only(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "data" / "spool-bot.sqlite3")
    try:
        spool.keep("slack", {"inbound_id": "slack:D1:1", "payload": {"text": "my salary is…"}})
        files = modes(tmp_path / "data")
    finally:
        spool.close()
    assert "spool-bot.sqlite3-wal" in files  # written in WAL mode: the text is in this one first
    assert set(files.values()) == {0o600}
    assert mode(tmp_path / "data") == 0o700


def test_a_chat_leaves_only_owner_only_files(tmp_path: Path) -> None:
    data = tmp_path / "data"
    config = GatewayConfig(data_dir=str(data), agent={"model": "offline"})  # the default SQLite file
    stdout = io.StringIO()

    assert chat_main(config, io.StringIO("which database?\nSQLite\n"), stdout, data / "thread") == 0

    assert "Going with" in stdout.getvalue()
    files = modes(data)
    assert {"checkpoints.sqlite", "chat.log", "thread"} <= files.keys()
    assert set(files.values()) == {0o600}, files
    assert mode(data) == 0o700


def test_a_file_or_folder_that_exists_keeps_its_mode_and_content(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o750)
    path = shared / "checkpoints.sqlite"
    path.write_text("kept", encoding="utf-8")
    path.chmod(0o640)  # set up so by the operator

    assert private_file(path) == path

    assert mode(path) == 0o640 and path.read_text(encoding="utf-8") == "kept"
    assert mode(shared) == 0o750
