"""Mistakes in the bot's YAML file said plainly, as ``file:line:column: problem``: a tab that
indents a line (PyYAML's scanner only says "found character '\\t' that cannot start any token"),
any other YAML error, and a platform section under a misspelt name (``slak:``)."""

from __future__ import annotations

import pytest

from clarigate.gateway.boundary import registry
from clarigate.gateway.cli.main import main
from clarigate.gateway.runtime.config import load_config

pytestmark = pytest.mark.usefixtures("clean_environment")  # tests/gateway/conftest.py


def refusal(tmp_path, text: str) -> tuple[str, str]:
    bot = tmp_path / "bot.yaml"
    bot.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError) as refused:
        load_config(bot)
    return str(bot), str(refused.value)


def test_a_tab_indenting_a_line_is_said_plainly_with_file_line_and_column(tmp_path, capsys):
    bot, said = refusal(tmp_path, "bot_id: alpha\nslack:\n\tallowed_users: [U1]\n")
    assert said == (
        f"config file {bot}:3:1: not valid YAML: a tab indents this line; "
        "YAML does not allow tabs for indentation: indent with spaces"
    )
    assert "cannot start any token" not in said
    assert main(["doctor", "--config", bot]) == 1
    assert f"PROBLEM config: {said}" in capsys.readouterr().out.splitlines()


def test_a_tab_after_a_key_is_named_as_a_tab_too(tmp_path):
    bot, said = refusal(tmp_path, "bot_id:\talpha\n")
    assert said == f"config file {bot}:1:8: not valid YAML: a tab separates the text here; " + (
        "YAML does not allow tabs there: use spaces"
    )


@pytest.mark.parametrize(
    ("text", "where", "problem"),
    [
        ("bot_id: a: b\n", "1:10", "mapping values are not allowed here"),
        (
            "agent:\n  tools: [a\n",
            "3:1",
            "expected ',' or ']', but got '<stream end>' "
            "(while parsing a flow sequence, from line 2 column 10)",
        ),
        (
            "slack:\n  allowed_users: [U1]\n streaming: off\n",
            "3:2",
            "expected <block end>, but found '<block mapping start>' "
            "(while parsing a block mapping, from line 1 column 1)",
        ),
    ],
)
def test_other_yaml_errors_say_file_line_column_and_problem(tmp_path, text, where, problem):
    bot, said = refusal(tmp_path, text)
    assert said == f"config file {bot}:{where}: not valid YAML: {problem}"


@pytest.mark.parametrize(
    ("typo", "meant"), [("slak", "slack"), ("telegramm", "telegram"), ("feishuu", "feishu")]
)
def test_a_misspelt_platform_section_lists_the_sections_and_the_nearest(tmp_path, typo, meant):
    _, said = refusal(tmp_path, f"bot_id: alpha\n{typo}:\n  allowed_users: [U1]\n")
    platforms = ", ".join(sorted(registry.installed()))  # the built-in ones and any installed
    assert {"feishu", "slack", "telegram"} <= set(registry.installed())
    assert said == (
        f"'{typo}' in the config file is not a setting (did you mean `{meant}`?); the known sections "
        f"are {platforms} (platforms) and agent, files_out"
    )


def test_an_empty_misspelt_section_and_a_misspelt_plain_setting(tmp_path):
    _, said = refusal(tmp_path, "slakc:\nworkrs: 2\n")
    assert "'slakc' in the config file is not a setting (did you mean `slack`?); the known sections" in said
    assert "'workrs' in the config file is not a setting (did you mean `workers`?)" in said
    assert "'workrs' in the config file is not a setting (did you mean `workers`?);" not in said
