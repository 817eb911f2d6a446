"""Configuration: YAML under the environment, secrets from the environment only, platforms by credentials."""

from __future__ import annotations

import os

import pytest

from clarigate.adapters.slack.settings import SlackSettings
from clarigate.adapters.telegram.settings import TelegramSettings
from clarigate.gateway.runtime.config import (
    ENV_NAMES,
    GatewayConfig,
    credential_hints,
    load_config,
    startup_problems,
)

BOT_YAML = """
bot_id: sales-bot
answer_policy: anyone
workers: 2
redis_url: redis://yaml-host:6379/0
agent:
  model: offline
  allow_clarification: true
slack:
  allowed_users: [U1, U2]
  bot_token: xoxb-from-yaml
telegram:
  enabled: false
"""


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    """No operator variables leak in from the machine running the tests."""
    for name in [*ENV_NAMES, *(n for n in os.environ if n.upper().startswith("CLARIGATE_"))]:
        monkeypatch.delenv(name, raising=False)


def write(tmp_path, text: str):
    path = tmp_path / "bot.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_yaml_values_load_and_defaults_fill_the_rest(tmp_path):
    config = load_config(write(tmp_path, BOT_YAML))
    assert config.bot_id == "sales-bot" and config.answer_policy == "anyone" and config.workers == 2
    assert config.slack.allowed_users == ["U1", "U2"]
    assert config.agent.allow_clarification is True
    assert config.pending_ttl_seconds == 7 * 24 * 3600 and config.seen_ttl_seconds == 24 * 3600
    assert config.thread_ttl_seconds == 90 * 24 * 3600 and config.shutdown_grace_seconds == 20


def test_environment_overrides_yaml(tmp_path, monkeypatch):
    monkeypatch.setenv("CLARIGATE_BOT_ID", "support-bot")
    monkeypatch.setenv("REDIS_URL", "redis://env-host:6379/1")
    monkeypatch.setenv("CLARIGATE_WORKERS", "7")
    monkeypatch.setenv("LLM_MODEL", "scripted:/tmp/turns.yaml")
    monkeypatch.setenv("CLARIGATE_SLACK__ALLOWED_USERS", '["U9"]')
    monkeypatch.setenv("CLARIGATE_CONFIG", str(write(tmp_path, BOT_YAML)))

    config = load_config()

    assert config.bot_id == "support-bot"
    assert config.redis_url == "redis://env-host:6379/1"
    assert config.workers == 7
    assert config.agent.model == "scripted:/tmp/turns.yaml"
    assert config.agent.allow_clarification is True  # untouched YAML values stay
    assert config.slack.allowed_users == ["U9"]
    assert config.agent_settings().model == "scripted:/tmp/turns.yaml"


def test_secrets_come_from_the_environment_only_and_never_show(tmp_path, monkeypatch):
    config = load_config(write(tmp_path, BOT_YAML))
    assert config.slack.bot_token is None
    assert config.warnings == [
        "slack.bot_token in the config file is ignored: secrets come from SLACK_BOT_TOKEN"
    ]

    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-real-secret")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "sign-real-secret")
    config = load_config(write(tmp_path, BOT_YAML))
    assert config.slack.bot_token.get_secret_value() == "xoxb-real-secret"
    assert "real-secret" not in repr(config) and "real-secret" not in str(config.model_dump())


def test_a_platform_is_enabled_by_its_credentials_unless_switched_off(tmp_path, monkeypatch):
    assert load_config().enabled_platforms() == []
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123:abc")
    monkeypatch.setenv("FEISHU_APP_ID", "cli_x")
    assert load_config().enabled_platforms() == ["telegram"]  # Feishu needs its secret too
    monkeypatch.setenv("FEISHU_APP_SECRET", "s")
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1")
    monkeypatch.setenv("SLACK_APP_TOKEN", "xapp-1")
    assert load_config().enabled_platforms() == ["slack", "feishu", "telegram"]
    assert load_config(write(tmp_path, BOT_YAML)).enabled_platforms() == ["slack", "feishu"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("bot_id: [unclosed", "not valid YAML"),
        ("- a list", "must be a mapping"),
        ("answer_policy: everybody", "answer_policy"),
        ("workers: many", "workers"),
        ("workers: 0", "workers"),
        ("stale_claim_seconds: 0", "stale_claim_seconds"),  # would take every running job away
        ("pending_ttl_seconds: -1", "pending_ttl_seconds"),
        ("max_body_bytes: 0", "max_body_bytes"),
        ("bot_id: ''", "bot_id"),
        ("bot_id: 'my bot'", "bot_id"),
    ],
)
def test_a_wrong_file_is_reported_precisely(tmp_path, text, message):
    with pytest.raises(ValueError, match=message):
        load_config(write(tmp_path, text))


def test_a_missing_file_is_reported(tmp_path):
    with pytest.raises(ValueError, match="cannot read config file"):
        load_config(tmp_path / "nope.yaml")


@pytest.mark.parametrize(
    ("slack", "telegram", "slack_base", "telegram_base"),
    [
        ("http://fake:9001", "http://fake:9002", "http://fake:9001/api/", "http://fake:9002/bot"),
        ("http://fake:9001/api", "http://fake:9002/bot/", "http://fake:9001/api/", "http://fake:9002/bot"),
        (
            "https://proxy/slack/api/",
            "https://proxy/tg/bot",
            "https://proxy/slack/api/",
            "https://proxy/tg/bot",
        ),
    ],
)
def test_api_urls_naming_a_host_reach_the_api_under_it(
    monkeypatch, slack, telegram, slack_base, telegram_base
):
    monkeypatch.setenv("SLACK_API_URL", slack)
    monkeypatch.setenv("TELEGRAM_API_URL", telegram)
    config = load_config()
    assert (config.slack.api_url, config.telegram.api_url) == (slack_base, telegram_base)
    assert SlackSettings().api_url == "https://slack.com/api/"
    assert TelegramSettings().api_url == "https://api.telegram.org/bot"


def test_misspelt_settings_stop_the_load_with_the_nearest_name(tmp_path):
    path = write(
        tmp_path, "answer_polcy: anyone\nworkers: 2\nslack:\n  allowed_user: [U1]\nagent:\n  model: offline\n"
    )
    with pytest.raises(ValueError) as refused:
        load_config(path)
    message = str(refused.value)
    assert "'answer_polcy' in the config file is not a setting (did you mean `answer_policy`?)" in message
    assert (
        "'slack.allowed_user' in the config file is not a setting (did you mean `allowed_users`?)" in message
    )


def test_an_unknown_clarigate_variable_stops_the_load(monkeypatch):
    monkeypatch.setenv("CLARIGATE_SLACK__ALLOWED_USER", "U1")  # the allowlist would be silently off
    with pytest.raises(
        ValueError,
        match=r"CLARIGATE_SLACK__ALLOWED_USER is not a setting \(did you mean "
        r"`CLARIGATE_SLACK__ALLOWED_USERS`\?\)",
    ):
        load_config()
    monkeypatch.delenv("CLARIGATE_SLACK__ALLOWED_USER")
    monkeypatch.setenv("CLARIGATE_SLACK__ALLOWED_USERS", "U1")
    assert load_config().slack.allowed_users == ["U1"]


@pytest.mark.parametrize(
    ("env", "problem"),
    [
        ({"SLACK_BOT_TOKEN": "xoxb-1"}, "slack: SLACK_BOT_TOKEN is set but the platform needs"),
        ({"SLACK_SIGNING_SECRET": "s"}, "slack: SLACK_SIGNING_SECRET is set but"),
        (
            {"FEISHU_APP_ID": "cli_1"},
            "feishu: feishu.app_id (FEISHU_APP_ID) is set but the platform needs FEISHU_APP_ID and",
        ),
        ({"TELEGRAM_WEBHOOK_SECRET": "s"}, "telegram: TELEGRAM_WEBHOOK_SECRET is set but"),
        (
            {"TELEGRAM_BOT_TOKEN": "1:x", "TELEGRAM_WEBHOOK_URL": "https://bot.example.com/telegram/webhook"},
            "telegram: telegram.webhook_url (TELEGRAM_WEBHOOK_URL) is set without TELEGRAM_WEBHOOK_SECRET",
        ),
        (
            {"CLARIGATE_TELEGRAM__ENABLED": "true"},
            "telegram: enabled, but the platform needs TELEGRAM_BOT_TOKEN",
        ),
    ],
)
def test_part_of_a_platforms_credentials_is_a_startup_problem(monkeypatch, env, problem):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    (found,) = startup_problems(load_config())
    assert found.startswith(problem)


def test_complete_or_switched_off_platforms_are_no_startup_problem(monkeypatch):
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1")
    monkeypatch.setenv("SLACK_APP_TOKEN", "xapp-1")  # Socket Mode needs no signing secret
    monkeypatch.setenv("FEISHU_APP_ID", "cli_1")
    monkeypatch.setenv("CLARIGATE_FEISHU__ENABLED", "false")
    assert startup_problems(load_config()) == []


def test_allowlists_take_json_or_comma_lists_and_unquoted_numeric_ids(tmp_path, monkeypatch):
    monkeypatch.setenv("CLARIGATE_SLACK__ALLOWED_USERS", "U1, U2")
    monkeypatch.setenv("CLARIGATE_FEISHU__ALLOWED_CHATS", '["oc_1"]')
    config = load_config(write(tmp_path, "telegram:\n  allowed_users: [123456789, '42']\n"))
    assert config.slack.allowed_users == ["U1", "U2"]
    assert config.feishu.allowed_chats == ["oc_1"]
    assert config.telegram.allowed_users == ["123456789", "42"]


def test_the_default_concurrency_suits_a_model_that_takes_seconds(monkeypatch) -> None:
    monkeypatch.delenv("CLARIGATE_WORKERS", raising=False)
    # throughput ≈ concurrency ÷ model latency: tens of runs in flight keep a 2 s model busy
    assert GatewayConfig().workers >= 32


def test_streaming_off_and_on_read_as_written_in_yaml(tmp_path):
    """YAML 1.1 reads a bare ``off`` as false and ``on`` as true: the README's ``streaming: off``
    turns streaming off, on the bot and on one platform, instead of being refused."""
    config = load_config(
        write(tmp_path, "streaming: off\ntelegram:\n  streaming: on\nslack:\n  streaming: off\n")
    )
    assert config.streaming == "off"
    assert config.streams_on("telegram") is True and config.streams_on("slack") is False
    assert config.streams_on("feishu") is False  # the bot's own setting where a platform has none


def test_streaming_words_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("CLARIGATE_STREAMING", "on")
    monkeypatch.setenv("CLARIGATE_TELEGRAM__STREAMING", "off")
    config = load_config(write(tmp_path, "streaming: off\n"))
    assert config.streaming == "auto" and config.streams_on("telegram") is False


def test_a_streaming_word_that_means_nothing_is_still_refused(tmp_path):
    with pytest.raises(ValueError, match="streaming"):
        load_config(write(tmp_path, "streaming: sometimes\n"))


@pytest.mark.parametrize("word", ["false", "no", "off", "0", "FALSE", "No"])
def test_streaming_false_from_the_environment_reads_as_off(monkeypatch, word):
    """The words YAML's ``streaming: false`` / ``no`` / ``off`` take work from the environment too."""
    monkeypatch.setenv("CLARIGATE_STREAMING", word)
    monkeypatch.setenv("CLARIGATE_SLACK__STREAMING", word)
    config = load_config()
    assert config.streaming == "off" and config.streams_on("slack") is False


@pytest.mark.parametrize("word", ["true", "yes", "on", "1", "True"])
def test_streaming_true_from_the_environment_reads_as_auto(monkeypatch, word):
    monkeypatch.setenv("CLARIGATE_STREAMING", word)
    assert load_config().streaming == "auto"


#: What the kubelet puts in every pod of a namespace holding the Services ``clarigate`` (port
#: ``http`` 80/TCP) and ``clarigate-alpha`` (IPv6, port 80/TCP), unless the pod spec sets
#: ``enableServiceLinks: false`` (Kubernetes' "Discovering services: environment variables").
SERVICE_LINKS = {
    "CLARIGATE_SERVICE_HOST": "10.96.12.34",
    "CLARIGATE_SERVICE_PORT": "80",
    "CLARIGATE_SERVICE_PORT_HTTP": "80",
    "CLARIGATE_PORT": "tcp://10.96.12.34:80",
    "CLARIGATE_PORT_80_TCP": "tcp://10.96.12.34:80",
    "CLARIGATE_PORT_80_TCP_PROTO": "tcp",
    "CLARIGATE_PORT_80_TCP_PORT": "80",
    "CLARIGATE_PORT_80_TCP_ADDR": "10.96.12.34",
    "CLARIGATE_ALPHA_SERVICE_HOST": "fd00:10:96::1a",
    "CLARIGATE_ALPHA_SERVICE_PORT": "80",
    "CLARIGATE_ALPHA_PORT": "tcp://[fd00:10:96::1a]:80",
    "CLARIGATE_ALPHA_PORT_80_TCP": "tcp://[fd00:10:96::1a]:80",
    "CLARIGATE_ALPHA_PORT_80_TCP_PROTO": "tcp",
    "CLARIGATE_ALPHA_PORT_80_TCP_PORT": "80",
    "CLARIGATE_ALPHA_PORT_80_TCP_ADDR": "fd00:10:96::1a",
}


def test_kubernetes_service_links_do_not_stop_the_load(monkeypatch):
    """A Service named clarigate or clarigate-* in the namespace is no misspelt setting."""
    for name, value in SERVICE_LINKS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("CLARIGATE_WORKERS", "3")
    config = load_config()
    assert config.workers == 3 and startup_problems(config) == []


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("CLARIGATE_PORT", "8080"),  # the listening port is PORT: this one names nothing
        ("CLARIGATE_METRIC_PORT", "9090"),  # CLARIGATE_METRICS_PORT misspelt
        ("CLARIGATE_SERVICE_HOST", "not a host"),
        ("CLARIGATE_PORT_80_TCP_PROTO", "http"),
    ],
)
def test_a_variable_only_named_like_a_service_link_still_stops_the_load(monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    with pytest.raises(ValueError, match=f"environment variable {name} is not a setting"):
        load_config()


def test_the_feishu_hint_names_the_webhooks_check_too(monkeypatch):
    """ "No platform is enabled: set …" names all that Feishu's default webhook mode needs: an
    operator who sets only the app id and secret would meet a refusal at the next start."""
    hint = credential_hints(load_config())
    assert "FEISHU_APP_ID and FEISHU_APP_SECRET, plus FEISHU_ENCRYPT_KEY or FEISHU_VERIFICATION_TOKEN" in hint
    for name, value in {
        "FEISHU_APP_ID": "cli_1",
        "FEISHU_APP_SECRET": "s",
        "FEISHU_ENCRYPT_KEY": "k",
    }.items():
        monkeypatch.setenv(name, value)
    config = load_config()
    assert config.enabled_platforms() == ["feishu"] and startup_problems(config) == []
