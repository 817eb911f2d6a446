"""Under ``CLARIGATE_LOG_FORMAT=json`` (the image's default) every line a log pipeline reads is one
JSON object with the usual fields: a refused configuration's line, and ``chat.log``."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from clarigate.gateway.cli.chat import LOG_FILE, chat_main
from clarigate.gateway.cli.main import main
from clarigate.gateway.runtime.config import GatewayConfig

pytestmark = pytest.mark.usefixtures("clean_environment")  # tests/gateway/conftest.py

FIELDS = {"ts", "level", "logger", "message"}


def json_lines(text: str) -> list[dict[str, object]]:
    lines = [json.loads(line) for line in text.splitlines()]  # a line that is not JSON fails here
    assert lines and all(FIELDS <= set(line) for line in lines), lines
    return lines


@pytest.mark.parametrize(
    ("variables", "flags", "said"),
    [
        (
            {"CLARIGATE_LOG_FORMAT": "json", "CLARIGATE_WORKERSS": "3"},
            [],
            "environment variable CLARIGATE_WORKERSS is not a setting",
        ),
        ({"CLARIGATE_WORKERSS": "3"}, ["--log-format", "json"], "CLARIGATE_WORKERSS is not a setting"),
        ({"PORT": "8080/tcp"}, ["--log-format", "json"], "PORT '8080/tcp' is not a port number"),
    ],
    ids=["variable", "flag", "port"],
)
def test_a_refused_configuration_is_a_json_log_line_when_serve_logs_json(
    monkeypatch, capsys, variables, flags, said
):
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    assert main(["serve", *flags]) == 2
    (line,) = json_lines(capsys.readouterr().err)
    assert line["level"] == "ERROR" and line["logger"] == "clarigate.gateway.cli.main"
    assert str(line["message"]).startswith("cannot start: ") and said in str(line["message"]), line


def test_a_refused_configuration_stays_one_plain_line_in_text(monkeypatch, capsys):
    monkeypatch.setenv("CLARIGATE_WORKERSS", "3")
    assert main(["serve"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("clarigate: environment variable CLARIGATE_WORKERSS is not a setting"), err


def test_the_chat_log_follows_the_log_format(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CLARIGATE_LOG_FORMAT", "json")
    config = GatewayConfig(agent={"model": "offline"})  # the data directory: $CLARIGATE_DATA_DIR
    stdout = io.StringIO()
    assert chat_main(config, io.StringIO("hello\n"), stdout, tmp_path / "thread") == 0
    assert "Offline demo model" in stdout.getvalue()
    lines = json_lines((Path(config.data_dir) / LOG_FILE).read_text(encoding="utf-8"))
    assert any(str(line["message"]).startswith("run finished") for line in lines), lines
    assert any(line.get("platform") == "console" for line in lines)  # the run's coordinates too


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("log_format: json\nmax_body_bytes: -1\n", "invalid configuration: max_body_bytes"),
        ("log_format: JSON\nworkerss: 3\n", "'workerss' in the config file is not a setting"),
    ],
    ids=["invalid value", "unknown key"],
)
def test_a_refused_configuration_is_a_json_log_line_when_the_yaml_asks_for_json(
    capsys, tmp_path: Path, text: str, said: str
) -> None:
    path = tmp_path / "bot.yaml"
    path.write_text(text, encoding="utf-8")
    assert main(["serve", "--config", str(path)]) == 2
    (line,) = json_lines(capsys.readouterr().err)
    assert line["level"] == "ERROR" and line["logger"] == "clarigate.gateway.cli.main"
    assert str(line["message"]).startswith("cannot start: ") and said in str(line["message"]), line


def test_a_yaml_that_does_not_parse_is_a_json_log_line_under_the_variable(
    monkeypatch, capsys, tmp_path: Path
) -> None:
    path = tmp_path / "bot.yaml"
    path.write_text("log_format: json\nagent: [unclosed\n", encoding="utf-8")
    monkeypatch.setenv("CLARIGATE_CONFIG", str(path))
    monkeypatch.setenv("CLARIGATE_LOG_FORMAT", "json")
    assert main(["serve"]) == 2
    (line,) = json_lines(capsys.readouterr().err)
    assert f"config file {path}:3:1: not valid YAML: expected ','" in str(line["message"]), line


@pytest.mark.parametrize(
    ("text", "variables"),
    [
        ("log_format: json\nagent: [unclosed\n", {}),  # a file that does not parse cannot say
        ("log_format: json\nmax_body_bytes: -1\n", {"CLARIGATE_LOG_FORMAT": "text"}),  # the variable wins
    ],
    ids=["unparsed", "variable over yaml"],
)
def test_a_refused_configuration_stays_a_plain_line_when_json_is_not_known(
    monkeypatch, capsys, tmp_path: Path, text: str, variables: dict[str, str]
) -> None:
    path = tmp_path / "bot.yaml"
    path.write_text(text, encoding="utf-8")
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    assert main(["serve", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("clarigate: ") and "Traceback" not in err, err
