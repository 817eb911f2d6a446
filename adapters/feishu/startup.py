"""The Feishu adapter's start: lark-oapi loaded and the bot's identity learnt in the background,
and ``doctor``'s look at the credentials.

Importing lark-oapi takes seconds of CPU (2-5 s on a small machine), so the adapter does not
wait for it: ``start`` returns at once, the web process opens its port and takes webhooks
(verified, decrypted and parsed without the SDK), and the client is built in a worker thread
meanwhile, then the bot's open_id is asked for. ``/readyz`` says ``{"feishu": "starting"}``
until Feishu tells it; a message mentioning someone waits for the first answer (or the identity
kept in the store) a little (``IDENTITY_WAIT_SECONDS``). The identity is needed where messages
are taken in (which mention is the bot's), so only the process that receives asks for it
(``learn_identity``, from the adapter's ``start_receiving``: ``serve``'s web process, which
answers ``/readyz`` for the replica); a worker process, which only sends, builds the client and
asks nothing: a replica asks Feishu, and logs what it answers, once however many worker
processes it has.

Feishu failing to answer (a 5xx, a rate limit, the network: what ``open_api`` classifies as
transient) does not leave the bot without an identity for good: it is asked again in the
background, with backoff (``IDENTITY_RETRIES``), for as long as it takes, ``/readyz`` saying why
it is still starting. Meanwhile the identity an earlier start kept in the store is used
(``identity.KeptIdentity``: read at once, long before Feishu's first answer; what Feishu tells
replaces it, and is kept), and Feishu works: ``/readyz`` says it is ``"degraded (…)"``, which keeps
even a replica serving Feishu alone in rotation (webhooks and the long connection's events are
taken, and replies wait for Feishu's API within their delivery budget). With none kept, a group
message mentioning someone is not taken but left for Feishu to push again
(``identity.IdentityUnknown``): which mention is the bot's cannot be told, and answering an
"@所有人" announcement, or a member talking to another, would be worse; ``/readyz`` says Feishu
is still starting (a replica serving it alone is not ready until it knows who it is).

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
from collections.abc import Callable

from clarigate.adapters.feishu.settings import FeishuSettings
from clarigate.gateway.boundary.port import AdapterState
from clarigate.gateway.boundary.retry import RetryPolicy

from .identity import KeptIdentity
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
#: How long Feishu's first ask waits for the store's read of the identity kept before (it says
#: what the messages meanwhile meet, and what Feishu's answer is compared with).
RECALL_SECONDS = 2.0

#: What ``/readyz`` says for Feishu, by the state of the start.
STARTING = "starting"
ASKING_AGAIN = "starting (the bot's identity is not known yet: Feishu's bot/v3/info failed, asked again)"
KEPT_MEANWHILE = (
    "degraded (Feishu's open API does not answer: bot/v3/info failed, asked again; "
    "the bot's identity kept from before is used)"
)
REFUSED = "failed (Feishu refused {what}; asked again every {every})"
NO_CLIENT = "failed (the Feishu open API client could not be made: see the log)"


class Startup:
    """The client built (lark-oapi imported) and the bot's identity learnt, off the event loop."""

    def __init__(
        self,
        sender: FeishuSender,
        receiver: FeishuReceiver,
        state: Callable[[], AdapterState] | None = None,
        app_id: str = "",
    ) -> None:
        self.sender = sender
        self.receiver = receiver
        # the identity as the store keeps it, for the app (None: nothing kept)
        self.kept = KeptIdentity(state, app_id) if state is not None else None
        self.task: asyncio.Task[None] | None = None
        self.recalling: asyncio.Task[None] | None = None  # the kept identity read at start
        self.asked: asyncio.Future[None] | None = None  # done once the identity was asked for once
        self.known: asyncio.Future[None] | None = None  # done once asked, or the kept one read
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
        loop = asyncio.get_running_loop()
        self.asked, self.known = loop.create_future(), loop.create_future()
        self.receiver.identity = self.known
        if self.kept is not None:  # one store read: long before Feishu's first answer
            self.recalling = asyncio.create_task(self._recall(self.kept), name="feishu-kept-identity")
        if self.task is not None and self.task.done():  # built already (or it could not be)
            if self.state is not None:
                self._answered()  # no client: nothing to ask with
                return
            self.state = STARTING
            self.task = asyncio.create_task(self._load(built=True), name="feishu-identity")
        self.begin()

    def not_ready(self) -> str | None:
        """Why Feishu is not ready yet, as ``/readyz`` says it; None once Feishu told the identity."""
        if self.state == ASKING_AGAIN and self.receiver.bot_open_id is not None:
            return KEPT_MEANWHILE
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
        for task in (self.task, self.recalling):
            if task is not None and not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    async def _recall(self, kept: KeptIdentity) -> None:
        """The identity an earlier start kept, used until Feishu tells it (unless it told already)."""
        open_id = await kept.recall()
        if open_id is None or self.receiver.bot_open_id is not None:
            return
        self.receiver.bot_open_id = open_id
        self.receiver.deferrals.over()
        if self.known is not None and not self.known.done():
            self.known.set_result(None)
        log.debug("feishu: the bot's identity kept from an earlier start is used until Feishu tells it")

    async def _load(self, built: bool = False) -> None:
        try:
            if not built:
                await asyncio.to_thread(self.sender.load)
            if self.asked is not None:  # where messages are taken in (``learn_identity``)
                if self.recalling is not None:  # what was kept first: one store read
                    await asyncio.wait({self.recalling}, timeout=RECALL_SECONDS)
                await self._told(await self._learn())
            self.state = None
        except Exception as exc:  # the SDK would not load: each call made says so again
            self.state = NO_CLIENT
            log.error("feishu: the open API client could not be made: %s: %s", type(exc).__name__, exc)
        finally:
            self._answered()

    async def _told(self, open_id: str) -> None:
        """Feishu told the bot's open_id: used from now on, and kept for the next start."""
        before, self.receiver.bot_open_id = self.receiver.bot_open_id, open_id
        self.receiver.deferrals.over()
        if before is not None and before != open_id:
            log.warning(
                "feishu: Feishu tells another open_id for the bot than the one kept: Feishu's is used"
            )
        if self.kept is not None:
            await self.kept.keep(open_id)

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
            "feishu: Feishu refused to tell the bot's identity (%s): %s; check the app's credentials "
            "(FEISHU_APP_ID, FEISHU_APP_SECRET), its bot capability and that it is enabled (a changed "
            "setting needs a restart; asked again every %s meanwhile)",
            exc,
            self._meanwhile(),
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
            "feishu: Feishu did not tell the bot's identity (%s): asked again in %.0f s; %s",
            failure,
            wait,
            self._meanwhile(),
        )

    def _answered(self) -> None:
        for answered in (self.asked, self.known):
            if answered is not None and not answered.done():
                answered.set_result(None)

    def _meanwhile(self) -> str:
        """What group messages mentioning someone meet while Feishu does not tell the identity."""
        if self.receiver.bot_open_id is not None:
            return "meanwhile the one kept from an earlier start is used"
        return "meanwhile group messages mentioning someone are left for Feishu to push again"


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
