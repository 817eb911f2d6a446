"""The Slack Web API client: one call per attempt, and trouble counted in metrics.

slack_sdk's retry handlers are off (by default it retries connection errors): every call is
made once, its failure counted in ``clarigate_platform_api_errors_total`` and raised as
``DeliveryFailed``, transient (a 429 with its ``Retry-After``, a 5xx, the network, Slack's
transient codes) or permanent, with Slack's own error code. The core's delivery retries a
transient failure by the one retry policy (``clarigate.gateway.boundary.retry``), so a retry
never nests inside another. Calls made around an ack (``views.open``, a ``users.info`` asked for a
person's language) go through a second client with a short timeout, made once: a trigger's 3
seconds are worth more than a second try.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from clarigate.gateway.boundary.port import DeliveryFailed
from clarigate.gateway.runtime.logs import log_platform_call
from clarigate.gateway.runtime.metrics import PLATFORM_API_ERRORS

PLATFORM = "slack"
# Seconds. Longer than a trigger id's 3: ``views.open`` runs beside the ack, and Slack answers
# ``expired_trigger_id`` itself for a trigger too old, so a slow open that Slack still makes
# (2.5 s) is waited for, never reported to the person as failed while the modal appears.
ACK_PATH_TIMEOUT = 5
#: Model text is untrusted: no link in it is unfolded into the linked page's card or its image
#: (Slack's default for ``unfurl_media`` is on). Sent where the method takes them
#: (``chat.postMessage``, a ``response_url``); ``chat.update``, ``chat.postEphemeral`` and the
#: stream methods take neither.
NO_UNFURLS: dict[str, Any] = {"unfurl_links": False, "unfurl_media": False}

# Error codes Slack answers with ``ok: false`` that a later try can get past; every other
# code (invalid_blocks, channel_not_found, not_in_channel, invalid_auth, …) is permanent.
TRANSIENT_CODES = frozenset(
    {"ratelimited", "rate_limited", "fatal_error", "internal_error", "service_unavailable", "request_timeout"}
)
#: Permanent codes that say the channel takes nothing from the bot (gone, archived, the bot
#: removed): the recipient is gone (``DeliveryFailed.chat_refused``), not a failure to fix.
RECIPIENT_GONE_CODES = frozenset({"channel_not_found", "is_archived", "not_in_channel"})


def count_api_error(kind: str) -> None:
    """Count one Slack API problem (rate_limited | server_error | client_error | network)."""
    PLATFORM_API_ERRORS.labels(PLATFORM, kind).inc()


def build_client(token: str | None, api_url: str) -> AsyncWebClient:
    """An ``AsyncWebClient`` at ``api_url`` that makes each call once: none of slack_sdk's retry
    handlers (by default it retries a connection error), so a failure costs one call per attempt
    and the core's delivery decides, by the one retry policy, when to try again."""
    return AsyncWebClient(token=token, base_url=api_url, retry_handlers=[])


def build_ack_path_client(token: str | None, api_url: str) -> AsyncWebClient:
    """A client for calls made before an ack: like ``build_client``, with a short timeout."""
    return AsyncWebClient(token=token, base_url=api_url, timeout=ACK_PATH_TIMEOUT, retry_handlers=[])


def delivery_failed(method: str, error: Exception) -> DeliveryFailed:
    """A Web API failure classified: 429, 5xx, network and Slack's transient codes are transient
    (``retry_after`` from the ``Retry-After`` header); any other refusal is permanent, and a
    channel gone or closed to the bot (``RECIPIENT_GONE_CODES``) refuses the chat itself."""
    if isinstance(error, SlackApiError):
        response = error.response
        status = response.status_code
        data = response.data if isinstance(response.data, dict) else {}
        code = str(data.get("error") or f"http_{status}")
        retry_after: float | None = None
        if status == 429:
            try:
                retry_after = float(response.headers.get("Retry-After", ""))
            except (TypeError, ValueError):
                retry_after = None
        transient = status == 429 or status >= 500 or code in TRANSIENT_CODES
        return DeliveryFailed(
            f"Slack {method}: {code}",
            permanent=not transient,
            retry_after=retry_after,
            code=code,
            chat_refused=not transient and code in RECIPIENT_GONE_CODES,
        )
    return DeliveryFailed(f"Slack {method}: {type(error).__name__}", permanent=False, code="network")


class UserInfo(NamedTuple):
    """What ``users.info`` says of a person: the name to show and the Slack language, or None."""

    name: str | None
    locale: str | None


class SlackSender:
    """The Web API calls the adapter makes, once each; errors are counted and raised as
    ``DeliveryFailed``."""

    def __init__(self, client: AsyncWebClient, ack_client: AsyncWebClient | None = None) -> None:
        self.client = client
        self.ack_client = ack_client or client

    async def _call(
        self, method: str, *, ack_path: bool = False, form: bool = False, **params: Any
    ) -> dict[str, Any]:
        client = self.ack_client if ack_path else self.client
        # files.info takes no JSON body: its arguments go form-encoded
        if form:
            data = await self.attempt(method, lambda: client.api_call(method, data=params))
        else:
            data = await self.attempt(method, lambda: client.api_call(method, json=params))
        log_platform_call(PLATFORM, method, "ok", data.get("ts") or params.get("ts"))
        return data

    async def attempt(self, method: str, call: Callable[[], Awaitable[Any]]) -> dict[str, Any]:
        """Make one Web API call (``call``, any of the client's methods); its answer's data, or the
        failure counted, logged and raised as ``DeliveryFailed``."""
        try:
            response = await call()
        except SlackApiError as error:
            status = error.response.status_code
            count_api_error(
                "rate_limited" if status == 429 else "server_error" if status >= 500 else "client_error"
            )
            log_platform_call(PLATFORM, method, f"HTTP {status} {error.response.get('error', '')}".strip())
            raise delivery_failed(method, error) from error
        except (TimeoutError, OSError, aiohttp.ClientError) as error:
            count_api_error("network")
            log_platform_call(PLATFORM, method, f"network error {type(error).__name__}")
            raise delivery_failed(method, error) from error
        return dict(response.data) if isinstance(response.data, dict) else {}

    async def post(
        self,
        channel: str,
        text: str,
        blocks: list[dict[str, Any]] | None = None,
        thread_ts: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> str:
        """Post a message (in ``thread_ts``'s thread when given, with message ``metadata`` when
        given); returns its ``ts``."""
        params: dict[str, Any] = {"channel": channel, "text": text, **NO_UNFURLS}
        if blocks is not None:
            params["blocks"] = blocks
        if thread_ts:
            params["thread_ts"] = thread_ts
        if metadata is not None:
            params["metadata"] = metadata
        data = await self._call("chat.postMessage", **params)
        return str(data.get("ts", ""))

    async def update(
        self,
        channel: str,
        ts: str,
        text: str,
        blocks: list[dict[str, Any]] | None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """Replace a message's text and blocks (None: a text-only message, any blocks removed),
        and its ``metadata`` when given."""
        params: dict[str, Any] = {"channel": channel, "ts": ts, "text": text, "blocks": blocks or []}
        if metadata is not None:
            params["metadata"] = metadata
        await self._call("chat.update", **params)

    async def read_back(
        self, channel: str, thread_ts: str | None, oldest: float, cursor: str | None = None
    ) -> dict[str, Any]:
        """One page of the bot's conversation from ``oldest`` on, with every message's metadata:
        ``conversations.replies`` of ``thread_ts``'s thread, or ``conversations.history`` of the
        channel without one (form-encoded, as Slack documents both)."""
        params: dict[str, Any] = {
            "channel": channel,
            "oldest": f"{max(oldest, 0.0):.6f}",
            "include_all_metadata": "true",
            "limit": 200,
        }
        if cursor:
            params["cursor"] = cursor
        if thread_ts:
            return await self._call("conversations.replies", form=True, ts=thread_ts, **params)
        return await self._call("conversations.history", form=True, **params)

    async def start_stream(
        self,
        channel: str,
        thread_ts: str,
        chunks: list[dict[str, Any]],
        recipient: tuple[str, str] | None = None,
    ) -> str:
        """``chat.startStream``: a streamed reply in ``thread_ts``'s thread, opened with ``chunks``;
        ``recipient`` is ``(team id, user id)``, which Slack requires outside DMs. Returns its ``ts``."""
        # the run's steps as a timeline (each task in turn), not grouped as a plan
        params: dict[str, Any] = {"channel": channel, "thread_ts": thread_ts, "task_display_mode": "timeline"}
        if chunks:
            params["chunks"] = chunks
        if recipient is not None:
            params["recipient_team_id"], params["recipient_user_id"] = recipient
        data = await self._call("chat.startStream", **params)
        return str(data.get("ts", ""))

    async def append_stream(self, channel: str, ts: str, chunks: list[dict[str, Any]]) -> None:
        """``chat.appendStream``: more text (``markdown_text`` chunks) and task updates for a stream."""
        await self._call("chat.appendStream", channel=channel, ts=ts, chunks=chunks)

    async def stop_stream(
        self,
        channel: str,
        ts: str,
        chunks: list[dict[str, Any]] | None = None,
        blocks: list[dict[str, Any]] | None = None,
    ) -> None:
        """``chat.stopStream``: the stream ends (with ``chunks`` as its last content, and ``blocks``
        shown under it: a question's controls, if any)."""
        params: dict[str, Any] = {"channel": channel, "ts": ts}
        if chunks:
            params["chunks"] = chunks
        if blocks:
            params["blocks"] = blocks
        await self._call("chat.stopStream", **params)

    async def set_status(
        self, channel: str, thread_ts: str, status: str, loading_messages: list[str] | None = None
    ) -> None:
        """``assistant.threads.setStatus``: "<app> is working on it…" under an agent thread, with
        ``loading_messages`` shown in turn; an empty ``status`` clears it."""
        params: dict[str, Any] = {"channel_id": channel, "thread_ts": thread_ts, "status": status}
        if loading_messages:
            params["loading_messages"] = loading_messages
        await self._call("assistant.threads.setStatus", **params)

    async def set_suggested_prompts(self, channel: str, prompts: list[dict[str, str]], title: str) -> None:
        """``assistant.threads.setSuggestedPrompts`` for an agent app: no ``thread_ts`` (Slack
        ignores the call of an agent app that names one, without an error)."""
        await self._call(
            "assistant.threads.setSuggestedPrompts", channel_id=channel, prompts=prompts, title=title
        )

    async def set_title(self, channel: str, thread_ts: str, title: str) -> None:
        """``assistant.threads.setTitle``: the name an agent thread is listed under."""
        await self._call("assistant.threads.setTitle", channel_id=channel, thread_ts=thread_ts, title=title)

    async def delete(self, channel: str, ts: str) -> None:
        """Delete one of the bot's messages."""
        await self._call("chat.delete", channel=channel, ts=ts)

    async def ephemeral(self, channel: str, user: str, text: str, thread_ts: str | None = None) -> None:
        """Show ``text`` to ``user`` only."""
        params: dict[str, Any] = {"channel": channel, "user": user, "text": text}
        if thread_ts:
            params["thread_ts"] = thread_ts
        await self._call("chat.postEphemeral", **params)

    async def respond(self, response_url: str, text: str) -> None:
        """Answer a slash command through its ``response_url`` (seen by the person only), where
        the bot cannot post: a DM it is not a member of. The URL is never logged."""
        hook = AsyncWebhookClient(response_url, timeout=ACK_PATH_TIMEOUT, retry_handlers=[])
        try:
            response = await hook.send(text=text, response_type="ephemeral", **NO_UNFURLS)
        except (TimeoutError, OSError, aiohttp.ClientError) as error:
            count_api_error("network")
            log_platform_call(PLATFORM, "response_url", f"network error {type(error).__name__}")
            raise DeliveryFailed(f"Slack response_url: {type(error).__name__}", permanent=False) from error
        status, body = response.status_code, str(response.body or "").strip()
        log_platform_call(PLATFORM, "response_url", "ok" if status == 200 else f"HTTP {status} {body[:40]}")
        if status != 200:  # 404 used_url / expired_url: that URL will not take it
            transient = status == 429 or status >= 500
            count_api_error("server_error" if status >= 500 else "client_error")
            code = body[:40] or f"http_{status}"
            raise DeliveryFailed(f"Slack response_url: {code}", permanent=not transient, code=code)

    async def open_view(self, trigger_id: str, view: dict[str, Any]) -> None:
        """Open a modal: once, at once, no retry (the trigger id lives 3 seconds and works once)."""
        await self._call("views.open", ack_path=True, trigger_id=trigger_id, view=view)

    async def user_info(self, user_id: str, *, ack_path: bool = False) -> UserInfo:
        """A person's display name and Slack language (``zh-CN``) from one ``users.info`` with
        ``include_locale`` (needs ``users:read``; form-encoded, as Slack takes it), without
        retries; ``ack_path``: on the short-timeout client. Asked through ``names.PeopleBook``,
        which keeps the answer for both."""
        data = await self._call(
            "users.info", ack_path=ack_path, form=True, user=user_id, include_locale="true"
        )
        user = data.get("user") or {}
        profile = user.get("profile") or {}
        names = (
            profile.get("display_name"),
            profile.get("real_name"),
            user.get("real_name"),
            user.get("name"),
        )
        name = next((n.strip() for n in names if isinstance(n, str) and n.strip()), None)
        locale = user.get("locale")
        return UserInfo(name, locale if isinstance(locale, str) else None)

    async def channel_info(self, channel_id: str, *, ack_path: bool = False) -> UserInfo:
        """A channel's name from one ``conversations.info`` (needs ``channels:read``, and
        ``groups:read`` for a private channel; form-encoded), as a ``UserInfo`` with no language,
        without retries. Asked through ``names.PeopleBook``, which keeps it with people's names."""
        data = await self._call("conversations.info", ack_path=ack_path, form=True, channel=channel_id)
        name = (data.get("channel") or {}).get("name")
        return UserInfo(name.strip() if isinstance(name, str) and name.strip() else None, None)

    async def usergroup_handles(self, *, ack_path: bool = False) -> dict[str, str | None]:
        """Every user group's handle (``oncall``, as people type it after ``@``), by id, from one
        ``usergroups.list`` (needs ``usergroups:read``; form-encoded; it lists them all, and is a
        Tier 2 method), without retries. Asked through ``names.PeopleBook``, which keeps them an hour."""
        data = await self._call("usergroups.list", ack_path=ack_path, form=True)
        groups = [
            g for g in data.get("usergroups") or [] if isinstance(g, dict) and isinstance(g.get("id"), str)
        ]
        handles = {g["id"]: g.get("handle") for g in groups}
        return {i: h.strip() if isinstance(h, str) and h.strip() else None for i, h in handles.items()}

    async def file_info(self, file_id: str) -> dict[str, Any]:
        """``files.info``: a file's object (name, type, size, download URL), e.g. a Slack Connect
        file an event names by id only (``file_access: check_file_info``)."""
        data = await self._call("files.info", form=True, file=file_id)
        file = data.get("file")
        return file if isinstance(file, dict) else {}

    async def whoami(self) -> dict[str, Any]:
        """``auth.test``: the bot's team, user id and bot id; raises on a bad token."""
        return await self._call("auth.test")

    async def socket_url(self, app_token: str) -> str:
        """``apps.connections.open`` with the app-level token, as slack_sdk's Socket Mode client
        asks for it: a WebSocket URL to connect to once; raises on a refused token."""
        method = "apps.connections.open"
        data = await self.attempt(method, lambda: self.client.apps_connections_open(app_token=app_token))
        log_platform_call(PLATFORM, method, "ok")
        return str(data["url"])
