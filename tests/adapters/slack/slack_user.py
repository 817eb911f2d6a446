"""A person on Slack: events and interactions posted to ``/slack/events`` exactly as Slack signs them."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import time
from typing import Any
from urllib.parse import urlencode

import httpx

from .fake_slack import TEAM_ID, FakeSlack

SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
_ids = itertools.count(1)


def signed_headers(body: bytes, secret: str = SIGNING_SECRET, timestamp: int | None = None) -> dict[str, str]:
    """Slack's request signature: HMAC-SHA256 of ``v0:{timestamp}:{body}``."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(secret.encode(), f"v0:{ts}:".encode() + body, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}"}


def next_ts() -> str:
    """A fresh message ts."""
    return f"1800000000.{next(_ids):06d}"


class SlackUser:
    """Sends what Slack would send when a person writes, clicks or submits."""

    def __init__(self, http: httpx.AsyncClient, fake: FakeSlack) -> None:
        self.http = http
        self.fake = fake

    async def post(
        self, body: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> httpx.Response:
        """POST a signed body to the events URL (extra ``headers`` override the signature)."""
        all_headers = {"Content-Type": content_type, **signed_headers(body), **(headers or {})}
        return await self.http.post("/slack/events", content=body, headers=all_headers)

    async def event(
        self, event: dict[str, Any], event_id: str | None = None, retry: int | None = None
    ) -> httpx.Response:
        """An Events API callback wrapping ``event`` (``retry`` sets ``X-Slack-Retry-Num``)."""
        envelope = {
            "token": "legacy",
            "team_id": TEAM_ID,
            "api_app_id": "A0APP",
            "event": event,
            "type": "event_callback",
            "event_id": event_id or f"Ev{next(_ids):08d}",
            "event_time": int(time.time()),
            "authorizations": [{"team_id": TEAM_ID, "user_id": "U0BOT", "is_bot": True}],
        }
        headers = {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"} if retry else {}
        return await self.post(json.dumps(envelope).encode(), "application/json", headers)

    async def dm(
        self, text: str, user: str = "U1", channel: str = "D1", **extra: Any
    ) -> tuple[httpx.Response, str]:
        """A direct message; returns the response and the message ts."""
        ts = extra.pop("ts", None) or next_ts()
        event = {
            "type": "message",
            "channel_type": "im",
            "channel": channel,
            "user": user,
            "text": text,
            "ts": ts,
        }
        event.update(extra)
        return await self.event(event, event_id=extra.get("event_id")), ts

    async def mention(
        self, text: str, user: str = "U1", channel: str = "C1", **extra: Any
    ) -> tuple[httpx.Response, str]:
        """An ``app_mention`` in a channel (top level, or in ``thread_ts``)."""
        ts = extra.pop("ts", None) or next_ts()
        event = {
            "type": "app_mention",
            "channel": channel,
            "user": user,
            "text": f"<@U0BOT> {text}",
            "ts": ts,
        }
        event.update(extra)
        return await self.event(event), ts

    async def channel_message(
        self, text: str, user: str = "U1", channel: str = "C1", **extra: Any
    ) -> httpx.Response:
        """A plain channel message (``thread_ts`` makes it a thread reply)."""
        event = {"type": "message", "channel_type": "channel", "channel": channel, "user": user, "text": text}
        event["ts"] = extra.pop("ts", None) or next_ts()
        event.update(extra)
        return await self.event(event)

    async def slash_command(
        self,
        text: str,
        user: str = "U1",
        channel: str = "D1",
        command: str = "/clarigate",
        trigger_id: str | None = None,
        response_url: str | None = None,
    ) -> httpx.Response:
        """A slash command as Slack posts it: form-encoded fields, no thread
        (https://api.slack.com/interactivity/slash-commands#app_command_handling)."""
        fields = {
            "token": "legacy",
            "team_id": TEAM_ID,
            "team_domain": "test",
            "channel_id": channel,
            "channel_name": "directmessage" if channel.startswith("D") else "general",
            "user_id": user,
            "user_name": user.lower(),
            "command": command,
            "text": text,
            "api_app_id": "A0APP",
            "is_enterprise_install": "false",
            "response_url": response_url or self.fake.response_url(str(next(_ids))),  # served by the fake
            "trigger_id": trigger_id or f"{next(_ids)}.1.trigger",
        }
        return await self.post(urlencode(fields).encode(), "application/x-www-form-urlencoded")

    async def slash_hint(self, text: str, **fields: Any) -> dict[str, Any]:
        """A slash command's private answer: the ack's body, else (the ack empty, the person's
        language asked for after it) what followed through its ``response_url``."""
        before = len(self.fake.responses)
        response = await self.slash_command(text, **fields)
        assert response.status_code == 200
        if response.content:
            return dict(response.json())
        for _ in range(500):  # the adapter answers after the ack: a few event-loop turns
            if len(self.fake.responses) > before:
                return self.fake.responses[before]
            await asyncio.sleep(0.01)
        raise AssertionError("no answer in the ack nor through the response_url")

    async def interact(self, payload: dict[str, Any]) -> httpx.Response:
        """An interactivity request: form-encoded ``payload=<json>``."""
        body = urlencode({"payload": json.dumps(payload)}).encode()
        return await self.post(body, "application/x-www-form-urlencoded")

    def click_payload(
        self, message: dict[str, Any], action_id: str, user: str = "U1", option_value: str | None = None
    ) -> dict[str, Any]:
        """The ``block_actions`` payload of a click on ``action_id`` in a posted message."""
        element = next(
            e for b in message["blocks"] for e in b.get("elements", []) if e.get("action_id") == action_id
        )
        block = next(b for b in message["blocks"] if element in b.get("elements", []))
        action: dict[str, Any] = {
            "action_id": action_id,
            "block_id": block.get("block_id", "b1"),
            "type": element["type"],
            "action_ts": f"{time.time():.6f}",
        }
        if element["type"] == "button":
            action.update(value=element["value"], text=element["text"])
        elif element["type"] == "feedback_buttons":  # ``option_value``: "positive" or "negative"
            action["value"] = element[f"{option_value}_button"]["value"]
        else:
            picked = next(o for o in element["options"] if o["value"] == option_value)
            action["selected_option"] = picked
        ts = message["ts"]
        in_thread = {"thread_ts": message["thread_ts"]} if message.get("thread_ts") else {}
        return {
            "type": "block_actions",
            "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": TEAM_ID},
            "api_app_id": "A0APP",
            "token": "legacy",
            "container": {
                "type": "message",
                "message_ts": ts,
                "channel_id": message["channel"],
                "is_ephemeral": False,
                **in_thread,
            },
            "trigger_id": f"trigger-{next(_ids)}",
            "team": {"id": TEAM_ID, "domain": "test"},
            "channel": {"id": message["channel"], "name": "chat"},
            "message": {
                "type": "message",
                "ts": ts,
                "text": message.get("text"),
                "blocks": message["blocks"],
                **in_thread,
            },
            "actions": [action],
        }

    async def click(
        self, message: dict[str, Any], action_id: str, user: str = "U1", option_value: str | None = None
    ) -> httpx.Response:
        """Click a button (or pick ``option_value`` in a select) of a posted message."""
        return await self.interact(self.click_payload(message, action_id, user, option_value))

    def submission_payload(
        self, view: dict[str, Any], values: dict[str, Any], user: str = "U1"
    ) -> dict[str, Any]:
        """The ``view_submission`` payload of a modal opened with ``view`` and filled with ``values``."""
        submitted = {**view, "id": "V0MODAL", "hash": "h1", "state": {"values": values}}
        return {
            "type": "view_submission",
            "team": {"id": TEAM_ID, "domain": "test"},
            "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": TEAM_ID},
            "api_app_id": "A0APP",
            "token": "legacy",
            "trigger_id": f"trigger-{next(_ids)}",
            "view": submitted,
            "response_urls": [],
        }

    async def submit(self, view: dict[str, Any], values: dict[str, Any], user: str = "U1") -> httpx.Response:
        """Submit a modal."""
        return await self.interact(self.submission_payload(view, values, user))
