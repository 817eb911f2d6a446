"""Yes/no settings from the environment: the words people write are taken (``true``, ``yes``,
``1``, ``on``, any case), and a value that is none of them is refused naming the variable and the
words it takes, not pydantic's "Input should be a valid boolean, unable to interpret input"."""

from __future__ import annotations

import pytest

from clarigate.gateway.cli.main import main
from clarigate.gateway.runtime.config import load_config

pytestmark = pytest.mark.usefixtures("clean_environment")  # tests/gateway/conftest.py


@pytest.mark.parametrize(
    ("word", "value"), [("true", True), ("yes", True), ("1", True), ("On", True), ("no", False)]
)
def test_the_usual_words_are_taken(monkeypatch: pytest.MonkeyPatch, word: str, value: bool) -> None:
    monkeypatch.setenv("CLARIGATE_FEEDBACK", word)
    monkeypatch.setenv("DISABLE_CLARIFICATION", word)
    config = load_config()
    assert config.feedback is value and config.agent.disable_clarification is value


@pytest.mark.parametrize("word", ["sure", "true ", "y es"])
def test_another_word_is_refused_naming_the_variable_and_the_words(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], word: str
) -> None:
    monkeypatch.setenv("CLARIGATE_FEEDBACK", word)
    assert main(["doctor"]) == 1
    problems = [line for line in capsys.readouterr().out.splitlines() if line.startswith("PROBLEM")]
    assert problems == [
        "PROBLEM config: invalid configuration: feedback (CLARIGATE_FEEDBACK): not a yes/no value: "
        "write true or false (yes/no, on/off, 1/0 work too), nothing around it"
    ]
