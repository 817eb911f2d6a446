"""``clarigate doctor`` names the SQLite checkpointer it checks by its absolute path: a relative
``data_dir`` (or ``sqlite:relative.db``) is taken from the directory the command starts in, as
``serve`` takes it, and the report says which file that is (not "SQLite under .clarigate")."""

from __future__ import annotations

import pytest

from clarigate.gateway.cli.main import main

pytestmark = pytest.mark.usefixtures("clean_environment")  # tests/gateway/conftest.py


@pytest.mark.parametrize(
    ("setting", "file", "said"),
    [
        (
            "data_dir: state/bot\n",
            "state/bot/checkpoints.sqlite",
            " (in the data directory, CLARIGATE_DATA_DIR)",
        ),
        ("agent:\n  checkpointer_url: sqlite:threads.db\n", "threads.db", ""),
    ],
)
def test_a_relative_sqlite_checkpointer_is_reported_by_its_absolute_path(
    tmp_path, monkeypatch, capsys, setting, file, said
):
    started_in = tmp_path / "here"
    started_in.mkdir()
    monkeypatch.chdir(started_in)
    bot = tmp_path / "bot.yaml"
    bot.write_text(setting, encoding="utf-8")
    monkeypatch.setenv("LLM_MODEL", "offline")
    monkeypatch.delenv("CLARIGATE_DATA_DIR", raising=False)  # the tests' own (tests/conftest.py)

    main(["doctor", "--config", str(bot)])

    out = capsys.readouterr().out.splitlines()
    assert f"ok      agent: model 'offline', checkpointer SQLite {started_in / file}{said}" in out, out
    assert (started_in / file).is_file()  # the file checked is the one named
