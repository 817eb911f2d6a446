"""The terminal chat tests' ``bot``: a console chat on the core, its agent scripted (``test_console.Bot``)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from .test_console import Bot


@pytest.fixture
def bot() -> Iterator[Bot]:
    with asyncio.Runner() as runner:
        made = Bot(runner)
        yield made
        runner.run(made.gateway.stop(grace=0))
