"""The app manifest operators paste into Slack matches what the adapter listens to."""

from __future__ import annotations

from pathlib import Path

import yaml

from clarigate.adapters.slack import SlackAdapter

from .conftest import slack_settings
from .fake_slack import FakeSlack

MANIFEST = Path(__file__).parents[3] / "deploy" / "slack" / "manifest.yaml"

# The scope each subscribed event needs (Slack's Events API reference).
EVENT_SCOPES = {
    "app_mention": "app_mentions:read",
    "message.im": "im:history",
    "message.channels": "channels:history",
    "message.groups": "groups:history",
    "message.mpim": "mpim:history",
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
    assert {EVENT_SCOPES[e] for e in events} | {"chat:write"} <= scopes
    assert manifest["features"]["app_home"]["messages_tab_enabled"] is True  # people can DM the bot


def test_manifest_declares_the_slash_command_on_the_same_url():
    manifest = yaml.safe_load(MANIFEST.read_text())
    [command] = manifest["features"]["slash_commands"]
    assert command["command"] == "/clarigate"
    assert command["url"] == manifest["settings"]["event_subscriptions"]["request_url"]
    assert all(word in command["usage_hint"] for word in ("new", "cancel", "status", "help"))
    assert "commands" in manifest["oauth_config"]["scopes"]["bot"]


# Why the adapter needs each scope: the Web API methods it calls, the events it subscribes to.
SCOPE_USES = {
    "app_mentions:read": "app_mention",
    "chat:write": "chat.postMessage, chat.update, chat.delete, chat.postEphemeral",
    "im:history": "message.im",
    "channels:history": "message.channels",
    "groups:history": "message.groups",
    "mpim:history": "message.mpim",
    "commands": "/clarigate",
    "users:read": "users.info",
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
