"""The baseline for the ack path: a bare slack-bolt app that verifies each signed request and acks.

Served like ``clarigate serve`` (uvicorn, uvloop, httptools, no access log), no store, no work:
``python bench/bolt_ack_app.py PORT SIGNING_SECRET BOT_TOKEN API_URL`` (bolt checks the token with
``auth.test`` once, at the fake Web API). Started by ``bench/http_e2e.py``.
"""

from __future__ import annotations

import sys
from typing import Any

import uvicorn
from slack_bolt.adapter.starlette.async_handler import AsyncSlackRequestHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route


def build(secret: str, token: str, api_url: str) -> Starlette:
    """Starlette with bolt's own handler at ``/slack/events``; message events are acked and dropped."""
    app = AsyncApp(signing_secret=secret, client=AsyncWebClient(token=token, base_url=api_url))

    @app.event("message")
    async def ignore(body: dict[str, Any]) -> None:  # bolt acks events by itself
        return None

    handler = AsyncSlackRequestHandler(app)

    async def events(request: Request) -> Response:
        return await handler.handle(request)

    return Starlette(routes=[Route("/slack/events", events, methods=["POST"])])


if __name__ == "__main__":
    port, secret, token, api_url = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    app = build(secret, token, api_url)
    uvicorn.run(app, host="127.0.0.1", port=port, loop="uvloop", access_log=False, log_level="warning")
