"""A masked secret takes only its own place on a log line: the text around it stays as written."""

from __future__ import annotations

import logging

import pytest

from clarigate.gateway.runtime.logs import without_secrets
from tests.log_capture import captured_logs

URL = "postgresql://app@127.0.0.1:5433/bot?sslmode=disable&password=pg-Query-pw"


def test_a_postgres_url_with_its_password_in_the_query_keeps_the_words_after_it() -> None:
    """It was ``…?password=*** connection failed``: the colon after the URL went with the mask."""
    with captured_logs(["pg-Query-pw"]) as logs:
        logging.getLogger("clarigate.gateway.runtime.serve").error(
            "cannot start: %s", f"checkpointer: PostgreSQL at {without_secrets(URL)}: connection failed"
        )
    (line,) = logs.lines()
    assert line.endswith(
        "cannot start: checkpointer: PostgreSQL at "
        "postgresql://app@127.0.0.1:5433/bot?sslmode=disable&password=***: connection failed"
    ), line


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        ("GET /x?password=Never-Registered: refused", "GET /x?password=***: refused"),
        ("retry of /x?token=tok-123, then gave up", "retry of /x?token=***, then gave up"),
        ("(form: api_key=k3y-value)", "(form: api_key=***)"),
        ("dsn password=a:b;c host=db", "dsn password=*** host=db"),  # a colon inside: all masked
        ("?secret=s3cr3t&next=1.", "?secret=***&next=1."),
    ],
)
def test_an_unregistered_secret_parameter_is_masked_up_to_the_punctuation_after_it(
    written: str, shown: str
) -> None:
    with captured_logs([]) as logs:
        logging.getLogger("clarigate.gateway.test").warning(written)
    assert logs.lines()[0].endswith(f"WARNING clarigate.gateway.test: {shown}"), logs.lines()
