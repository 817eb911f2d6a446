"""JSON logs: one object per line, and every line of a run carries platform, chat, thread and request."""

from __future__ import annotations

import io
import json
import logging

import pytest

from clarigate.adapters.testing import ScriptedRunner, asking, choice_request
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.runtime.logs import JsonFormatter, RunContextFilter
from clarigate.gateway.store.memory import MemoryStore


@pytest.fixture
def json_lines():
    """Capture the root logger's output as parsed JSON lines."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(RunContextFilter())
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    yield lambda: [json.loads(line) for line in stream.getvalue().splitlines()]
    root.removeHandler(handler)
    root.setLevel(old_level)


async def test_lines_of_a_run_carry_its_coordinates(make_gateway, json_lines):
    question = choice_request("Which region?", ["eu", "us"])
    agent_log = logging.getLogger("agent.test")

    def script(turn):
        agent_log.info("thinking")  # a line logged from inside the run, by another package
        if turn.text == "fail":
            raise RuntimeError("boom")
        return asking(question) if turn.response is None else TurnOutput(replies=["done"])

    runner = ScriptedRunner(script)
    gateway, chat = await make_gateway(MemoryStore("logs"), runner)
    await chat.say("deploy", chat="ops")
    await gateway.drain()
    await chat.click(0)
    await gateway.drain()
    await chat.say("fail", chat="ops")
    await gateway.drain()

    lines = json_lines()
    thread_id = runner.calls[0].thread_id
    thinking = [line for line in lines if line["message"] == "thinking"]
    assert len(thinking) == 3
    assert all(line["thread_id"] == thread_id for line in thinking)
    assert all(line["platform"] == "test" and line["chat"] == "ops" for line in thinking)
    asked = next(line for line in lines if line["message"] == "asked for clarification")
    assert asked["request_id"] == question.request_id and asked["thread_id"] == thread_id
    failed = next(line for line in lines if line["message"].startswith("agent run failed"))
    assert failed["level"] == "ERROR" and failed["thread_id"] == thread_id and "boom" in failed["exc"]
    received = [line for line in lines if line["message"].startswith("received event")]
    assert received and all("thread_id" not in line for line in received)  # nothing left over from a run


async def test_one_message_can_be_followed_end_to_end_by_its_inbound_id(make_gateway, json_lines):
    question = choice_request("Which region?", ["eu", "us"])
    runner = ScriptedRunner(
        lambda turn: asking(question) if turn.response is None else TurnOutput(replies=["ok"])
    )
    gateway, chat = await make_gateway(MemoryStore("follow"), runner)
    await chat.say("deploy", chat="ops")
    await gateway.drain()
    await chat.click(0)
    await gateway.drain()

    lines = json_lines()
    first = next(line["inbound_id"] for line in lines if line["message"].startswith("received event"))
    steps = [line for line in lines if line.get("inbound_id") == first]
    messages = [line["message"] for line in steps]
    assert messages[0].startswith("received event") and messages[0].endswith(": queued")
    assert "run started (model offline)" in messages
    finished = next(m for m in messages if m.startswith("run finished in"))
    assert "model call(s)" in finished and finished.endswith(", asking")
    assert any(m.startswith("sent clarification to test: message ") for m in messages)
    assert "asked for clarification" in messages
    thread_id = runner.calls[0].thread_id
    assert all(line["platform"] == "test" and line["chat"] == "ops" for line in steps)
    assert all(line["thread_id"] == thread_id for line in steps if line["message"].startswith("run "))

    answered = next(line for line in lines if line["message"].startswith("clarification answered by"))
    assert answered["request_id"] == question.request_id and answered["thread_id"] == thread_id
    follow = [line["message"] for line in lines if line.get("inbound_id") == answered["inbound_id"]]
    assert follow[0].startswith("clarification answered") and any(
        m.startswith("run finished") for m in follow
    )


def test_the_redactor_masks_configured_secrets_and_token_shapes():
    from clarigate.gateway.runtime.config import GatewayConfig
    from clarigate.gateway.runtime.redaction import redact, register_secrets

    config = GatewayConfig(
        redis_url="redis://:r3dis-pass@redis:6379/0",
        telegram={"bot_token": "42:abcdefghij"},
        slack={"signing_secret": "sign-me-please"},
    )
    register_secrets(config.secret_values())
    line = (
        "GET https://api.telegram.org/bot42:abcdefghij/getMe; signed with sign-me-please; "
        "redis://:r3dis-pass@redis; Authorization: Bearer xoxb-1-2-3; xapp-1-A-2; "
        "https://api.telegram.org/bot7777:unregistered_Token-value/sendMessage; ?access_token=abc&x=1"
    )
    masked = redact(line)
    for secret in (
        "42:abcdefghij",
        "sign-me-please",
        "r3dis-pass",
        "xoxb-1-2-3",
        "xapp-1-A-2",
        "unregistered",
    ):
        assert secret not in masked
    assert "/bot***/getMe" in masked and "?access_token=***&x=1" in masked


@pytest.mark.parametrize(
    ("line", "hidden"),
    [
        ("GET https://api.telegram.org/bot7777:Unregistered-token/getMe", "Unregistered-token"),
        ("token 123456789:AAbbCCddEEffGGhhIIjjKKllMMnnOOppQQ", "AAbbCCddEEffGGhhIIjjKKllMMnnOOppQQ"),
        ("header xoxp-9-8-7", "xoxp-9-8-7"),
        ("app token xapp-9-B-8", "xapp-9-B-8"),
        ("AUTHORIZATION: BEARER sk-Ab.Cd", "sk-Ab.Cd"),
        ("postgresql://app:pg-Pass@db:5432/x", "pg-Pass"),
        ("GET /x?API_KEY=k3y-value&y=2", "k3y-value"),
        ("redis+sentinel://h:26379/m?db=1&sentinel_password=Sentinel-pw", "Sentinel-pw"),
        ("rediss://h:6379/0?ssl_password=key-file-pw", "key-file-pw"),
        ("postgresql://db/x?sslmode=require&sslpassword=pg-key-pw", "pg-key-pw"),
        ("signature refused (body: token=gIkuvaNzQIHg97ATvDxqgjtO&team_id=T1)", "gIkuvaNzQIHg97ATvDxqgjtO"),
        ("response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1%2F12%2FsecretPath", "secretPath"),
    ],
)
def test_each_token_shape_is_masked_on_a_line_of_its_own(line, hidden):
    from clarigate.gateway.runtime.redaction import redact

    assert hidden not in redact(line)


URLS = {
    # as written -> as shown; the secrets registered for the redactor
    "redis+sentinel://u:master-pw@s1:26379,s2:26379/mymaster?sentinel_password=Sentinel%2Bpw&db=2": (
        "redis+sentinel://u:***@s1:26379,s2:26379/mymaster?sentinel_password=***&db=2",
        ["master-pw", "Sentinel%2Bpw", "Sentinel+pw"],
    ),
    # a password holding "/", "#", "=" unescaped; an "@" in the query
    "rediss://:pa/ss#w=rd@redis:6379/0?ssl_password=key-pw&client_name=me@host": (
        "rediss://***@redis:6379/0?ssl_password=***&client_name=me@host",
        ["pa/ss#w=rd", "key-pw"],
    ),
    "postgresql://app:pg-pw@db:5432/x?sslmode=require&sslpassword=pg-key-pw&sslkey=/k.pem": (
        "postgresql://app:***@db:5432/x?sslmode=require&sslpassword=***&sslkey=/k.pem",
        ["pg-pw", "pg-key-pw"],
    ),
    "redis://redis:6379/0": ("redis://redis:6379/0", []),
    "sqlite:///data/checkpoints.db": ("sqlite:///data/checkpoints.db", []),
}


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://postgres@127.0.0.1:5432/test",  # trust or peer auth
        "redis://default@redis:6379/0",
        "redis://app:@redis:6379/0",  # an empty password: nothing to mask
        "rediss://@redis:6379/0",
    ],
)
def test_a_url_without_a_password_is_shown_as_written(url):
    """It was shown as ``postgres:***@``: the operator looked for a password never set."""
    from clarigate.gateway.runtime.redaction import url_secrets, without_secrets

    assert without_secrets(url) == url
    assert url_secrets(url) == []


@pytest.mark.parametrize("url", URLS)
def test_a_store_url_is_shown_without_any_of_its_secrets(url):
    from clarigate.gateway.runtime.config import GatewayConfig
    from clarigate.gateway.runtime.redaction import url_secrets, without_secrets

    shown, secrets = URLS[url]
    assert without_secrets(url) == shown
    assert url_secrets(url) == secrets
    assert set(secrets) <= set(GatewayConfig(redis_url=url).secret_values())
    # the same secrets in a checkpointer's URL (a PostgreSQL one: Redis is not a checkpointer)
    checkpointer = url.replace(url.partition("://")[0], "postgresql", 1)
    assert set(secrets) <= set(GatewayConfig(agent={"checkpointer_url": checkpointer}).secret_values())


def test_a_quiet_librarys_child_logger_stays_quiet_at_whatever_level_it_sets_itself():
    from tests.log_capture import captured_logs

    # Bolt builds ``slack_bolt.AsyncApp``, ``slack_bolt.RequestVerification``… when an app is made
    # and gives each the root logger's level: after ``setup_logging`` held ``slack_bolt`` at WARNING
    children = [logging.getLogger(f"{tree}.TestChild") for tree in ("slack_bolt", "httpx", "telegram")]
    with captured_logs([], level=logging.DEBUG) as logs:
        for child in children:
            child.setLevel(logging.DEBUG)
            child.debug("request body: %s", "words")
            child.info("request body: %s", "words")
            child.warning("refused")
        logging.getLogger("clarigate.gateway.test").debug("ours")
    for child in children:
        child.setLevel(logging.NOTSET)
    assert "words" not in logs.text()
    assert [line.split(" ", 2)[2] for line in logs.lines()] == [
        *(f"WARNING {child.name}: refused" for child in children),
        "DEBUG clarigate.gateway.test: ours",
    ]
