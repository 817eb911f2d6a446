"""The Feishu adapter's start: lark-oapi loaded and the bot's identity learnt in the background,
and ``doctor``'s look at the credentials.

Importing lark-oapi takes seconds of CPU (2-5 s on a small machine), so the adapter does not
wait for it: ``start`` returns at once, the web process opens its port and takes webhooks
(verified, decrypted and parsed without the SDK), and the client is built in a worker thread
meanwhile, then the bot's open_id is asked for. ``/readyz`` says ``{"feishu": "starting"}``
until it is known; a message mentioning someone waits for the first answer a little
(``IDENTITY_WAIT``). The identity is needed where messages are taken in (which mention is the
bot's), so only the process that receives asks for it (``learn_identity``, from the adapter's
``start_receiving``: ``serve``'s web process, which answers ``/readyz`` for the replica); a worker
process, which only sends, builds the client and asks nothing: a replica asks Feishu, and logs
what it answers, once however many worker processes it has.

Feishu failing to answer (a 5xx, a rate limit, the network: what ``open_api`` classifies as
transient) does not leave the bot without an identity for good: it is asked again in the
background, with backoff (``IDENTITY_RETRIES``), for as long as it takes, ``/readyz`` saying why
it is still starting. Meanwhile no group message counts as addressed to the bot
(``receive.parse_message``): which mention is the bot's cannot be told, and answering an
"@所有人" announcement, or a member talking to another, is worse than a request missed for the
few seconds Feishu's open API is down (the bot could hardly reply then anyway).

A refusal (what ``open_api`` classifies as permanent: the tenant-token endpoint refusing the app's
credentials, codes 10003 and 10014; ``bot/v3/info`` answering a 4xx or a code other than a rate
limit, such as a missing scope or bot capability) is no outage: ``/readyz`` says ``"failed (…)"``
and one ERROR line names the settings. It is asked about again in the background, no more often
than ``REFUSAL_RECHECKS`` says (a wrong secret in the settings needs them fixed and a restart; an
app re-enabled or a scope granted is noticed without one), and one line says when it clears. A
replica serving other platforms too stays ready meanwhile (``gateway.web.readiness``).
"""

from __future__ import annotations

import asyncio
import logging

from clarigate.adapters.feishu.settings import FeishuSettings
from clarigate.gateway.boundary.retry import RetryPolicy

from .open_api import CREDENTIALS_REFUSED_CODES, FeishuApiError
from .receive import FeishuReceiver
from .send import FeishuSender

log = logging.getLogger("clarigate.adapters.feishu.adapter")

#: Learning the bot's open_id: asked again while Feishu fails transiently, 0.5 s after the first
#: failure, doubling up to a minute apart (spread, so that replicas do not ask in step), until it
#: answers; a refusal (credentials, the app's bot capability) is left to ``REFUSAL_RECHECKS``.
IDENTITY_RETRIES = RetryPolicy(first=0.5, cap=60.0, jitter=0.2)
#: After a refusal: the identity asked for again every 5 minutes (spread by a tenth), until Feishu
#: tells it; a failure meanwhile (a refusal or an outage) waits for the next one.
REFUSAL_RECHECKS = RetryPolicy(first=300.0, cap=300.0, jitter=0.1)

#: What ``/readyz`` says for Feishu, by the state of the start.
STARTING = "starting"
ASKING_AGAIN = "starting (the bot's identity is not known yet: Feishu's bot/v3/info failed, asked again)"
REFUSED = "failed (Feishu refused {what}; asked again every {every})"
NO_CLIENT = "failed (the Feishu open API client could not be made: see the log)"


class Startup:
    """The client built (lark-oapi imported) and the bot's identity learnt, off the event loop."""

    def __init__(self, sender: FeishuSender, receiver: FeishuReceiver) -> None:
        self.sender = sender
        self.receiver = receiver
        self.task: asyncio.Task[None] | None = None
        self.asked: asyncio.Future[None] | None = None  # done once the identity was asked for once
        self.state: str | None = None  # what ``/readyz`` says (None: not begun, or done)

    def begin(self) -> None:
        """Start building the client (once), in the background."""
        if self.task is None:
            self.state = STARTING
            self.task = asyncio.create_task(self._load(), name="feishu-start")

    def learn_identity(self) -> None:
        """Where messages are taken in: learn the bot's identity too, once the client is built
        (once); the receiver may wait for the first answer (``FeishuReceiver.identity``)."""
        if self.asked is not None:
            return
        self.asked = asyncio.get_running_loop().create_future()
        self.receiver.identity = self.asked
        if self.task is not None and self.task.done():  # built already (or it could not be)
            if self.state is not None:
                self._answered()  # no client: nothing to ask with
                return
            self.state = STARTING
            self.task = asyncio.create_task(self._load(built=True), name="feishu-identity")
        self.begin()

    def not_ready(self) -> str | None:
        """Why Feishu is not ready yet, as ``/readyz`` says it; None once the identity is known."""
        return self.state

    async def wait(self) -> None:
        """Until the client is built and, where it is learnt, the identity was asked for once
        (``begin`` first): known, or asked again in the background."""
        if self.asked is not None:
            await asyncio.gather(asyncio.shield(self.asked), return_exceptions=True)
        elif self.task is not None:
            await asyncio.gather(asyncio.shield(self.task), return_exceptions=True)

    async def stop(self) -> None:
        """Cancel a start still under way (the import itself finishes in its thread)."""
        if self.task is not None and not self.task.done():
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)

    async def _load(self, built: bool = False) -> None:
        try:
            if not built:
                await asyncio.to_thread(self.sender.load)
            if self.asked is not None:  # where messages are taken in (``learn_identity``)
                self.receiver.bot_open_id = await self._learn()
            self.state = None
        except Exception as exc:  # the SDK would not load: each call made says so again
            self.state = NO_CLIENT
            log.error("feishu: the open API client could not be made: %s: %s", type(exc).__name__, exc)
        finally:
            self._answered()

    async def _learn(self) -> str:
        """The bot's open_id: asked until Feishu tells it, a refusal asked about again now and then."""
        try:
            open_id = await IDENTITY_RETRIES.call(self._ask, on_retry=self._asking_again)
        except FeishuApiError as exc:  # a refusal: asking again at once cannot change it
            refused = exc
        else:
            if self.state == ASKING_AGAIN:
                log.info("feishu: Feishu tells the bot's identity now (it failed to before): Feishu is ready")
            return open_id
        self._refused(refused)
        open_id = await REFUSAL_RECHECKS.call(
            self._ask, retry_on=_failed, on_retry=self._still_refused, failed_first=refused
        )
        log.info("feishu: Feishu tells the bot's identity now (it refused before): Feishu is ready")
        return open_id

    def _refused(self, exc: FeishuApiError) -> None:
        """Say the refusal: ``/readyz`` and one ERROR line (the first answer is in)."""
        self.state = refused_state(exc)
        self._answered()
        log.error(
            "feishu: Feishu refused to tell the bot's identity (%s): no group message counts as "
            "addressed to the bot; check the app's credentials (FEISHU_APP_ID, FEISHU_APP_SECRET), "
            "its bot capability and that it is enabled (a changed setting needs a restart; asked "
            "again every %s meanwhile)",
            exc,
            _every(REFUSAL_RECHECKS.cap),
        )

    def _still_refused(self, attempt: int, failure: BaseException, wait: float) -> None:
        """After a re-check that failed: a new refusal said once, the rest at debug level."""
        now = refused_state(failure) if isinstance(failure, FeishuApiError) and failure.permanent else None
        if now is not None and now != self.state:
            self.state = now
            log.warning("feishu: Feishu still refuses to tell the bot's identity, now: %s", failure)
        else:
            log.debug(
                "feishu: the bot's identity is still not told (%s): asked again in %.0f s", failure, wait
            )

    async def _ask(self) -> str:
        """One ask for the bot's open_id; an answer without one is tried again like a failure."""
        open_id = await self.sender.bot_open_id()
        if not open_id:
            raise FeishuApiError("GET /open-apis/bot/v3/info: no bot.open_id in the answer", permanent=False)
        return open_id

    def _asking_again(self, attempt: int, failure: BaseException, wait: float) -> None:
        """After a failed ask: the first answer is in (the identity is unknown for now), and why."""
        self.state = ASKING_AGAIN
        self._answered()
        level = logging.WARNING if attempt == 1 else logging.INFO
        log.log(
            level,
            "feishu: the bot's identity is not known yet (%s): asked again in %.0f s; meanwhile no "
            "group message counts as addressed to the bot",
            failure,
            wait,
        )

    def _answered(self) -> None:
        if self.asked is not None and not self.asked.done():
            self.asked.set_result(None)


def refused_state(exc: FeishuApiError) -> str:
    """What ``/readyz`` says for a refusal, on one line: Feishu's code (and the settings to check
    when it refused the credentials), never Feishu's whole message nor a secret."""
    code = exc.feishu_code
    if code in CREDENTIALS_REFUSED_CODES:
        what = f"the app's credentials: code {code}, check FEISHU_APP_ID and FEISHU_APP_SECRET"
    else:
        said = [f"HTTP {exc.status}" if exc.status else "", f"code {code}" if code is not None else ""]
        what = f"to tell the bot's identity: {' '.join(filter(None, said)) or 'see the log'}"
    return REFUSED.format(what=what, every=_every(REFUSAL_RECHECKS.cap))


def _every(seconds: float) -> str:
    return f"{seconds / 60:g} min" if seconds >= 60 else f"{seconds:g} s"


def _failed(failure: BaseException) -> bool:
    """Any failure of a re-check waits for the next one (a cancellation stops them)."""
    return isinstance(failure, Exception)


async def credential_problems(settings: FeishuSettings, sender: FeishuSender) -> list[str]:
    """Missing credentials, unprotected webhooks, and whether a tenant token can be had (``doctor``)."""
    if not (settings.app_id and settings.app_secret):
        return ["FEISHU_APP_ID and FEISHU_APP_SECRET are required"]
    problems = settings.startup_problems()  # neither key nor token: serve's own words, said once
    webhook = settings.mode == "webhook" and not problems
    if webhook and not settings.encrypt_key:
        problems.append("FEISHU_ENCRYPT_KEY is unset: webhook requests cannot be signature-checked")
    if webhook and not settings.verification_token:
        problems.append("FEISHU_VERIFICATION_TOKEN is unset: webhook events are not token-checked")
    try:
        await sender.bot_open_id()
    except FeishuApiError as exc:
        where = f"Feishu API at {settings.domain}"
        problems.append(f"{where} refused the app credentials or is unreachable: {exc}")
    return problems
