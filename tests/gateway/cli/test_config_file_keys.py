"""A key written twice in the bot's YAML file stops ``serve`` and is ``doctor``'s PROBLEM, naming
the key and both lines: YAML parsers keep the last one silently, so a second ``slack:`` section
dropped the first one's allow-list (the bot open to everyone) and a second ``bot_id`` won unseen."""

from __future__ import annotations

import pytest

from clarigate.gateway.cli.main import main
from clarigate.gateway.runtime.config import load_config
from clarigate.gateway.runtime.preflight import ExitCode

pytestmark = pytest.mark.usefixtures("clean_environment")  # tests/gateway/conftest.py

TWICE = """\
bot_id: alpha
slack:
  allowed_users: [U012AB3CD]
answer_policy: anyone
slack:
  streaming: off
"""


def test_a_section_written_twice_stops_serve_and_doctor_naming_both_lines(tmp_path, capsys):
    bot = tmp_path / "bot.yaml"
    bot.write_text(TWICE, encoding="utf-8")
    said = f"config file {bot}: 'slack' is set twice (lines 2 and 5): keep one"

    assert main(["serve", "--config", str(bot), "--host", "127.0.0.1", "--port", "0"]) == ExitCode.CONFIG
    assert capsys.readouterr().err.splitlines() == [f"clarigate: {said}"]
    assert main(["doctor", "--config", str(bot)]) == 1
    assert f"PROBLEM config: {said}" in capsys.readouterr().out.splitlines()


def test_a_key_twice_inside_a_section_is_named_too(tmp_path):
    bot = tmp_path / "bot.yaml"
    bot.write_text("agent:\n  model: offline\n  max_model_calls: 5\n  model: offline\n", encoding="utf-8")
    with pytest.raises(ValueError, match="'model' is set twice \\(lines 2 and 4\\)"):
        load_config(bot)


def test_yaml_merge_keys_still_fill_a_section(tmp_path):
    """``<<: *anchor`` is not a key written twice: what it merges, the section may set again."""
    bot = tmp_path / "bot.yaml"
    text = "slack: &common\n  allowed_users: [U1]\ntelegram:\n  <<: *common\n  allowed_users: ['42']\n"
    bot.write_text(text, encoding="utf-8")
    config = load_config(bot)
    assert config.slack.allowed_users == ["U1"] and config.telegram.allowed_users == ["42"]
