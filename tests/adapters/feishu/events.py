"""Feishu events as Feishu sends them: v2 envelopes, AES-256-CBC encrypted, signed."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import time
import uuid
from typing import Any

from Crypto.Cipher import AES

APP_ID = "cli_test_app"
VERIFICATION_TOKEN = "v-token-123"
ENCRYPT_KEY = "e-key-456"
TENANT = "tenant-1"


def encrypt(plaintext: bytes, key: str = ENCRYPT_KEY) -> str:
    """Feishu's encryption: AES-256-CBC, key sha256(encrypt_key), random IV first, PKCS7, base64."""
    iv = os.urandom(16)
    pad = 16 - len(plaintext) % 16
    cipher = AES.new(hashlib.sha256(key.encode()).digest(), AES.MODE_CBC, iv)
    return base64.b64encode(iv + cipher.encrypt(plaintext + bytes([pad]) * pad)).decode()


def signed(
    payload: dict[str, Any],
    key: str = ENCRYPT_KEY,
    timestamp: float | str | None = None,
    forge: bool = False,
) -> tuple[bytes, dict[str, str]]:
    """The encrypted body and signature headers for ``payload`` (a ``str`` timestamp: sent and
    signed as it is)."""
    body = json.dumps({"encrypt": encrypt(json.dumps(payload).encode(), key)}).encode()
    ts = (
        timestamp if isinstance(timestamp, str) else str(int(time.time() if timestamp is None else timestamp))
    )
    nonce = uuid.uuid4().hex
    digest = hashlib.sha256((ts + nonce + key).encode() + body).hexdigest()
    if forge:
        digest = hashlib.sha256(b"someone else" + body).hexdigest()
    headers = {
        "Content-Type": "application/json",
        "X-Lark-Request-Timestamp": ts,
        "X-Lark-Request-Nonce": nonce,
        "X-Lark-Signature": digest,
    }
    return body, headers


def envelope(
    event_type: str, event: dict[str, Any], event_id: str | None = None, token: str = VERIFICATION_TOKEN
) -> dict[str, Any]:
    """A v2 event envelope."""
    return {
        "schema": "2.0",
        "header": {
            "event_id": event_id or uuid.uuid4().hex,
            "event_type": event_type,
            "create_time": str(int(time.time() * 1000)),
            "token": token,
            "app_id": APP_ID,
            "tenant_key": TENANT,
        },
        "event": event,
    }


def message_event(
    text: str,
    user: str = "ou_alice",
    chat: str = "oc_p2p",
    chat_type: str = "p2p",
    message_id: str | None = None,
    root_id: str | None = None,
    mention_bot: bool = False,
    event_id: str | None = None,
) -> dict[str, Any]:
    """An ``im.message.receive_v1`` event for a text message."""
    mentions = []
    if mention_bot:
        text = f"@_user_1 {text}"
        mentions = [
            {"key": "@_user_1", "id": {"open_id": "ou_bot"}, "name": "clarigate", "tenant_key": TENANT}
        ]
    message: dict[str, Any] = {
        "message_id": message_id or f"om_in_{uuid.uuid4().hex[:8]}",
        "chat_id": chat,
        "chat_type": chat_type,
        "message_type": "text",
        "content": json.dumps({"text": text}),
        "create_time": str(int(time.time() * 1000)),
        "mentions": mentions,
    }
    if root_id:
        message.update(root_id=root_id, parent_id=root_id, thread_id="omt_thread")
    sender = {
        "sender_id": {"open_id": user, "user_id": user[3:], "union_id": "on_" + user},
        "sender_type": "user",
        "tenant_key": TENANT,
    }
    return envelope("im.message.receive_v1", {"sender": sender, "message": message}, event_id)


def card_action(
    value: dict[str, Any],
    user: str = "ou_alice",
    chat: str = "oc_p2p",
    message_id: str = "om_1",
    event_id: str | None = None,
    **action: Any,
) -> dict[str, Any]:
    """A ``card.action.trigger`` callback: ``action`` adds ``tag``, ``option``, ``form_value``, …"""
    event = {
        "operator": {"tenant_key": TENANT, "open_id": user, "user_id": user[3:], "union_id": "on_" + user},
        "token": "c-" + uuid.uuid4().hex,
        "action": {"value": value, "tag": action.pop("tag", "button"), **action},
        "host": "im_message",
        "context": {"open_message_id": message_id, "open_chat_id": chat},
    }
    return envelope("card.action.trigger", event, event_id)


def legacy_signed(payload: dict[str, Any], token: str = VERIFICATION_TOKEN) -> tuple[bytes, dict[str, str]]:
    """An old-style card callback as Feishu posts it: plain JSON, SHA-1 signed with the verification token."""
    body = json.dumps(payload).encode()
    ts, nonce = str(int(time.time())), uuid.uuid4().hex
    digest = hashlib.sha1((ts + nonce + token).encode() + body).hexdigest()
    headers = {
        "Content-Type": "application/json",
        "X-Lark-Request-Timestamp": ts,
        "X-Lark-Request-Nonce": nonce,
        "X-Lark-Signature": digest,
    }
    return body, headers


def legacy_card_action(
    value: dict[str, Any], user: str = "ou_alice", message_id: str = "om_1"
) -> dict[str, Any]:
    """A ``card.action.trigger_v1`` callback ("消息卡片回传交互（旧）"): flat, ``token`` is the card's."""
    return {
        "open_id": user,
        "user_id": user[3:],
        "open_message_id": message_id,
        "open_chat_id": "oc_p2p",
        "tenant_key": TENANT,
        "token": "c-" + uuid.uuid4().hex,
        "action": {"value": value, "tag": "button"},
    }


def schema_one_event(text: str) -> dict[str, Any]:
    """A schema 1.0 message event (``{"uuid", "token", "ts", "type": "event_callback", "event"}``)."""
    return {
        "uuid": uuid.uuid4().hex,
        "token": VERIFICATION_TOKEN,
        "ts": f"{time.time():.6f}",
        "type": "event_callback",
        "event": {
            "type": "message",
            "app_id": APP_ID,
            "tenant_key": TENANT,
            "root_id": "",
            "parent_id": "",
            "open_chat_id": "oc_p2p",
            "chat_type": "private",
            "msg_type": "text",
            "open_id": "ou_alice",
            "open_message_id": "om_" + uuid.uuid4().hex[:8],
            "is_mention": False,
            "text": text,
            "text_without_at_bot": text,
        },  # fmt: skip
    }
