"""The Feishu adapter's start: lark-oapi loaded and the bot's identity learnt in the background,
and ``doctor``'s look at the credentials.

Importing lark-oapi takes seconds of CPU (2-5 s on a small machine), so the adapter does not
wait for it: ``start`` returns at once, the web process opens its port and takes webhooks
(verified, decrypted and parsed without the SDK), and the client is built in a worker thread
meanwhile, then the bot's open_id is asked for. ``/readyz`` says ``{"feishu": "starting"}``
until then; a message mentioning someone waits for the identity a little (``IDENTITY_WAIT``).
"""

from __future__ import annotations

import asyncio
import logging

from clarigate.adapters.feishu.settings import FeishuSettings
from clarigate.gateway.boundary.retry import RetryPolicy

from .open_api import FeishuApiError
from .receive import FeishuReceiver
from .send import FeishuSender

log = logging.getLogger("clarigate.adapters.feishu.adapter")

#: Learning the bot's open_id at start: twice at most (without it any mention counts as the bot's).
IDENTITY_RETRIES = RetryPolicy(first=0.5, attempts=2)


class Startup:
    """The client built (lark-oapi imported) and the bot's identity learnt, off the event loop."""

    def __init__(self, sender: FeishuSender, receiver: FeishuReceiver) -> None:
        self.sender = sender
        self.receiver = receiver
        self.task: asyncio.Task[None] | None = None

    def begin(self) -> None:
        """Start loading (once); the receiver may wait for it (``FeishuReceiver.identity``)."""
        if self.task is None:
            self.task = asyncio.create_task(self._load(), name="feishu-start")
            self.receiver.identity = self.task

    def pending(self) -> bool:
        """Whether it was begun and is not done yet."""
        return self.task is not None and not self.task.done()

    async def wait(self) -> None:
        """Until it is done (``begin`` first)."""
        if self.task is not None:
            await asyncio.gather(asyncio.shield(self.task), return_exceptions=True)

    async def stop(self) -> None:
        """Cancel a start still under way (the import itself finishes in its thread)."""
        if self.task is not None and not self.task.done():
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)

    async def _load(self) -> None:
        try:
            await asyncio.to_thread(self.sender.load)
            self.receiver.bot_open_id = await IDENTITY_RETRIES.call(self.sender.bot_open_id)
        except FeishuApiError as exc:  # not fatal: any mention then counts as a mention of the bot
            log.warning("feishu: cannot read the bot's identity: %s", exc)
        except Exception as exc:  # the SDK would not load: each call made says so again
            log.error("feishu: the open API client could not be made: %s: %s", type(exc).__name__, exc)


async def credential_problems(settings: FeishuSettings, sender: FeishuSender) -> list[str]:
    """Missing credentials, unprotected webhooks, and whether a tenant token can be had (``doctor``)."""
    problems = []
    if not (settings.app_id and settings.app_secret):
        return ["FEISHU_APP_ID and FEISHU_APP_SECRET are required"]
    if settings.mode == "webhook" and not settings.encrypt_key:
        problems.append("FEISHU_ENCRYPT_KEY is unset: webhook requests cannot be signature-checked")
    if settings.mode == "webhook" and not settings.verification_token:
        problems.append("FEISHU_VERIFICATION_TOKEN is unset: webhook events are not token-checked")
    try:
        await sender.bot_open_id()
    except FeishuApiError as exc:
        where = f"Feishu API at {settings.domain}"
        problems.append(f"{where} refused the app credentials or is unreachable: {exc}")
    return problems
