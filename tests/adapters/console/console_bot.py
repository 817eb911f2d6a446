"""The console chat against the real core, for the tests: a started gateway on the embedded
store with the console adapter, and ``chat`` typing lines until the input ends."""

from __future__ import annotations

import asyncio
import io
from typing import Any

import pytest

from clarigate.adapters.console import ConsoleAdapter
from clarigate.adapters.console.receive import ConsoleChat, Leave
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.store.memory import MemoryStore
from tests.conftest import config_for_tests


class ConsoleBot:
    """A started gateway on ``agent`` (an ``AgentRunner``) with the console adapter, printing to
    ``out``; ``chat`` types each line, until the input ends, and gives what was printed."""

    def __init__(self, runner: asyncio.Runner, agent: Any) -> None:
        self.runner = runner
        self.agent = agent
        self.gateway = Gateway(config_for_tests(), MemoryStore(), agent)
        self.out = io.StringIO()
        self.adapter = ConsoleAdapter(self.gateway, self.out, user="ada", language="en")
        self.gateway.register(self.adapter)
        runner.run(self.gateway.start())

    def chat(self, *typed: str) -> str:
        """Type each line, until the input ends; what was printed."""
        stdin = io.StringIO("".join(line + "\n" for line in typed))
        with pytest.raises(Leave):
            ConsoleChat(self.adapter, stdin, self.runner.run, self.gateway.drain).loop()
        return self.out.getvalue()
