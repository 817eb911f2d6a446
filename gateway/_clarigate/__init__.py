"""clarigate: a chat-platform gateway for agents that ask before they guess.

This file is the ``clarigate`` package itself: ``pyproject.toml`` maps ``clarigate`` here and
``clarigate.gateway``, ``clarigate.adapters`` and ``clarigate.agent`` to the project's three
code folders, so that the distribution installs one top-level import name.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("clarigate")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"
