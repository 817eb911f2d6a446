"""The app manifest operators paste into Slack matches what the adapter listens to."""

from __future__ import annotations

from pathlib import Path

import yaml

from clarigate.adapters.slack import SlackAdapter

from .conftest import slack_settings
from .fake_slack import FakeSlack

MANIFEST = Path(__file__).parents[3] / "deploy" / "slack" / "manifest.yaml"

# The scope each subscribed event needs (Slack's Events API reference; None: no scope, a bot user).
EVENT_SCOPES = {
    "app_mention": "app_mentions:read",
    "message.im": "im:history",
    "message.channels": "channels:history",
    "message.groups": "groups:history",
    "message.mpim": "mpim:history",
    "member_left_channel": "channels:read",  # groups:read for private channels
    "app_home_opened": None,
    "app_context_changed": None,  # sent only to apps with features.agent_view
}


def test_manifest_points_events_and_interactivity_at_the_adapter_route(fake_slack: FakeSlack):
    manifest = yaml.safe_load(MANIFEST.read_text())
    settings = manifest["settings"]
    path = SlackAdapter(slack_settings(fake_slack), gateway=None).routes()[0].path  # type: ignore[arg-type]
    assert settings["event_subscriptions"]["request_url"].endswith(path)
    assert settings["interactivity"]["request_url"].endswith(path)
    assert settings["interactivity"]["is_enabled"] is True
    assert settings["socket_mode_enabled"] is False  # the documented switch for Socket Mode


def test_manifest_subscribes_to_every_event_the_adapter_handles_with_its_scope():
    manifest = yaml.safe_load(MANIFEST.read_text())
    events = set(manifest["settings"]["event_subscriptions"]["bot_events"])
    scopes = set(manifest["oauth_config"]["scopes"]["bot"])
    assert events == set(EVENT_SCOPES)
    assert {EVENT_SCOPES[e] for e in events if EVENT_SCOPES[e]} | {"chat:write"} <= scopes
    assert manifest["features"]["app_home"]["messages_tab_enabled"] is True  # people can DM the bot


def test_manifest_declares_the_slash_command_on_the_same_url():
    manifest = yaml.safe_load(MANIFEST.read_text())
    [command] = manifest["features"]["slash_commands"]
    assert command["command"] == "/clarigate"
    assert command["url"] == manifest["settings"]["event_subscriptions"]["request_url"]
    assert all(word in command["usage_hint"] for word in ("new", "cancel", "status", "help"))
    assert "stop a request" in command["description"]  # cancel also stops the request in progress
    assert "commands" in manifest["oauth_config"]["scopes"]["bot"]


# Why the adapter needs each scope: the Web API methods it calls, the events it subscribes to.
SCOPE_USES = {
    "app_mentions:read": "app_mention",
    "chat:write": "chat.postMessage, chat.update, chat.delete, chat.postEphemeral, "
    "assistant.threads.setStatus",
    "assistant:write": "assistant.threads.setSuggestedPrompts, assistant.threads.setTitle",
    "im:history": "message.im",
    "channels:history": "message.channels",
    "groups:history": "message.groups",
    "mpim:history": "message.mpim",
    "commands": "/clarigate",
    "users:read": "users.info",
    "channels:read": "conversations.info, member_left_channel",
    "groups:read": "conversations.info, member_left_channel",
    "usergroups:read": "usergroups.list",
    "files:read": "url_private_download, files.info",
    "files:write": "files.getUploadURLExternal, files.completeUploadExternal",
}


def test_manifest_asks_for_no_scope_the_adapter_does_not_use():
    manifest = yaml.safe_load(MANIFEST.read_text())
    assert set(manifest["oauth_config"]["scopes"]["bot"]) == set(SCOPE_USES)
    source = "\n".join(p.read_text() for p in (Path(__file__).parents[3] / "adapters" / "slack").glob("*.py"))
    for scope, use in SCOPE_USES.items():
        if "." in use and not use.startswith("message."):
            assert any(method.strip() in source for method in use.split(",")), scope


# What Slack's manifest schema and the agent docs say of the agent messaging experience, checked
# here as no copy of the schema is available offline: ``features.agent_view`` needs an
# ``agent_description``; its ``suggested_prompts`` are at most four, each a title and a message;
# the legacy ``assistant_view`` is not declared beside it; ``app_context_changed`` reaches only
# agent apps; suggested prompts and titles need ``assistant:write``; the agent's container is the
# app's messages tab, which people must be able to write in.
MAX_PROMPTS = 4


def test_manifest_declares_the_agent_view_as_slacks_schema_requires():
    manifest = yaml.safe_load(MANIFEST.read_text())
    features = manifest["features"]
    view = features["agent_view"]
    assert isinstance(view, dict) and set(view) <= {"agent_description", "suggested_prompts"}
    assert isinstance(view["agent_description"], str) and view["agent_description"].strip()
    prompts = view.get("suggested_prompts") or []
    assert len(prompts) <= MAX_PROMPTS
    assert all(
        set(p) == {"title", "message"} and all(isinstance(v, str) and v for v in p.values()) for p in prompts
    )
    assert "assistant_view" not in features
    assert features["app_home"]["messages_tab_enabled"] is True
    assert features["app_home"]["messages_tab_read_only_enabled"] is False
    events = manifest["settings"]["event_subscriptions"]["bot_events"]
    assert {"app_home_opened", "app_context_changed", "message.im"} <= set(events)
    assert {"assistant:write", "chat:write", "im:history"} <= set(manifest["oauth_config"]["scopes"]["bot"])
