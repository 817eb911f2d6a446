"""What the HTTP server says about a failed request: its log lines and the failed-requests count."""

from __future__ import annotations

import logging

import pytest

from clarigate.gateway.runtime import metrics

SERVER_LOGGER = "clarigate.gateway.web.server"


def http_errors(route: str) -> float:
    """How many requests to ``route`` were answered 500 so far."""
    return metrics.HTTP_ERRORS.labels(route=route)._value.get()


def http_unavailable(route: str) -> float:
    """How many requests to ``route`` were answered 503 for the store so far."""
    return metrics.HTTP_UNAVAILABLE.labels(route=route)._value.get()


def problem_lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """The WARNING-or-worse records of a test (every logger): what an operator would see."""
    return [r for r in caplog.records if r.levelno >= logging.WARNING]


def one_bad_request_line(caplog: pytest.LogCaptureFixture, status: int) -> str:
    """The single line a bad request leaves: a WARNING from the server, without a traceback."""
    [line] = problem_lines(caplog)
    assert (line.name, line.levelno, line.exc_info) == (SERVER_LOGGER, logging.WARNING, None)
    assert f"({status})" in line.getMessage()
    return line.getMessage()


def one_failure_with_traceback(caplog: pytest.LogCaptureFixture, error: type[BaseException]) -> str:
    """The single ERROR a failed request leaves, with the traceback of ``error``; its text."""
    [line] = problem_lines(caplog)
    assert (line.name, line.levelno) == (SERVER_LOGGER, logging.ERROR)
    assert line.exc_info is not None and isinstance(line.exc_info[1], error)
    return logging.Formatter().format(line)
