"""A masked secret takes only its own place on a log line: the text around it stays as written."""

from __future__ import annotations

import logging

import pytest

from clarigate.gateway.runtime.redaction import without_secrets
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
        # a provider's 401 names the key half-masked (OpenAI: its first 7 and last 4 characters)
        (
            "Incorrect API key provided: sk-SECR**********BBBB. You can find",
            "Incorrect API key provided: ***. You can find",
        ),
        ("a **bold** word, and **** alone", "a **bold** word, and **** alone"),
    ],
)
def test_an_unregistered_secret_parameter_is_masked_up_to_the_punctuation_after_it(
    written: str, shown: str
) -> None:
    with captured_logs([]) as logs:
        logging.getLogger("clarigate.gateway.test").warning(written)
    assert logs.lines()[0].endswith(f"WARNING clarigate.gateway.test: {shown}"), logs.lines()


async def test_a_model_call_through_the_openai_sdk_logs_no_request_url(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The OpenAI SDK's HTTP client (httpx2, httpcore2) logs each request's URL at INFO: a key an
    OpenAI-compatible proxy takes in its path would be in the log."""
    from clarigate.agent.harness import AgentSettings, ClarifyingAgent
    from tests.agent.openai_stub import Stub, serving

    with serving(Stub(replies=["Hello."]), monkeypatch) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{stub.url}/k/proxy-Key-5e1f0a")
        settings = AgentSettings(model="openai:gpt-4.1-mini", checkpointer_url="memory://")
        with captured_logs([], level=logging.INFO) as logs:  # as `serve` logs by default
            agent = await ClarifyingAgent.create(settings)
            try:
                assert (await agent.run_turn("t", "hi")).replies == ["Hello."]
            finally:
                await agent.aclose()
    assert any("run tokens: gpt-4.1-mini" in line for line in logs.lines()), logs.lines()  # the call was made
    assert not [line for line in logs.lines() if "proxy-Key" in line or "HTTP Request" in line], logs.lines()


async def test_the_feishu_long_connections_url_is_logged_without_its_access_key_and_ticket() -> None:
    """lark-oapi logs the websocket URL it connected to (``connected to wss://…``, at INFO, the
    ``Lark`` logger held at WARNING unless lowered), the URL Feishu's endpoint gave with the
    connection's ``access_key`` and ``ticket`` in its query."""
    from lark_oapi.core.log import logger
    from lark_oapi.ws.client import Client

    url = (
        "wss://msg-frontier.feishu.cn/ws/v2?fpid=493&aid=552564&device_id=7409386716836954131"
        "&access_key=a7c2f0e94b1d63e8&service_id=33554678&ticket=5c3e8f2a-91d0-4b7e-a6f4-02c9d1e7b835"
    )
    with captured_logs([], level=logging.DEBUG, chatty_libraries=True) as logs:
        logger.info(Client("cli_a1b2c3", "app-secret-value")._fmt_log("connected to {}", url))
    (line,) = logs.lines()
    assert line.endswith(
        "INFO Lark: connected to wss://msg-frontier.feishu.cn/ws/v2?fpid=493&aid=552564"
        "&device_id=7409386716836954131&access_key=***&service_id=33554678&ticket=***"
    ), line
