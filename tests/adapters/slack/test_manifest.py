"""The app manifest operators paste into Slack matches what the adapter listens to."""

from __future__ import annotations

from pathlib import Path

import yaml

from adapters.slack import SlackAdapter

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
