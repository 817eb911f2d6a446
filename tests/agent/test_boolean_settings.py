"""One meaning for a boolean setting: the library's ``AgentSettings.from_env`` reads
``ALLOW_CLARIFICATION`` and ``DISABLE_CLARIFICATION`` exactly as ``chat`` and ``serve`` do
(``load_config``), and a word that is not a boolean is an error in both, never a silent False."""

from __future__ import annotations

import pytest

from clarigate.agent.settings import AgentSettings
from clarigate.gateway.runtime.config import load_config

WORDS = ["1", "0", "true", "False", "t", "f", "yes", "no", "y", "n", "on", "OFF"]


@pytest.mark.parametrize("name", ["ALLOW_CLARIFICATION", "DISABLE_CLARIFICATION"])
@pytest.mark.parametrize("word", WORDS)
def test_the_library_and_the_gateway_agree(name: str, word: str, monkeypatch) -> None:
    monkeypatch.delenv("CLARIGATE_CONFIG", raising=False)
    monkeypatch.setenv(name, word)
    field = name.lower()
    from_library = getattr(AgentSettings.from_env({name: word}), field)
    from_gateway = getattr(load_config().agent, field)
    assert from_library is from_gateway
    assert from_library is (word.lower() in {"1", "true", "t", "yes", "y", "on"})


@pytest.mark.parametrize("word", ["enabled", "2", "sure", " true "])
def test_a_word_that_is_no_boolean_is_refused_by_both(word: str, monkeypatch) -> None:
    monkeypatch.delenv("CLARIGATE_CONFIG", raising=False)
    with pytest.raises(ValueError, match=f"ALLOW_CLARIFICATION={word!r} is not a boolean"):
        AgentSettings.from_env({"ALLOW_CLARIFICATION": word})
    monkeypatch.setenv("ALLOW_CLARIFICATION", word)
    with pytest.raises(ValueError, match="allow_clarification"):
        load_config()


def test_unset_or_empty_is_off() -> None:
    assert AgentSettings.from_env({}).allow_clarification is False
    assert AgentSettings.from_env({"ALLOW_CLARIFICATION": " "}).allow_clarification is False
