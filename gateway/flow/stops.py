"""Stopping a run in progress: ``/cancel`` with no question open stops the chat thread's run.

Each agent run is registered here while it goes (``RunStops.during``: its agent call runs as a
task of its own). A ``/cancel`` of the chat thread (``Control``), when no question is open, stops
it: the agent call's task is cancelled (in process, the checkpoint keeps the steps that completed
and the agent answers a tool call left open when the thread goes on, ``agent.history``); a run
on a LangGraph server is cancelled there (``AgentRunner.abandon``). The job then ends as done,
with one line for the person (``run_stopped``), and the messages after it run in order.

Who may stop a run: the person whose request it is, or anyone where ``answer_policy`` is
``anyone`` (as for closing a question, ``answers.policy_refusal``); anyone else is told
privately that the run is not theirs to stop, once per run and person (``first_time`` in the
store). A ``/cancel`` sent before the run started (it ran late: meant for the run before, or
sent in the same whole second on Telegram) stops nothing, and the job running is never withdrawn
as a waiting message (``flow.withdrawals``). The person may also stop their run on the platform
itself (Slack's Stop on the run's streamed message, ``LiveStopped``; a terminal's Ctrl-C,
``GatewayPort.stop_run``): ``stop_own`` stops it in this process as their ``/cancel`` would
(Slack names no one for its Stop; only people in the conversation see the button, so it is taken
as the requester's).

A run held by another process (replica or worker) is reached through the store's stop channel
(Redis pub/sub, ``Store.publish_stop``): the process holding it decides, every other one answers
that it holds none, on the same channel; the ``/cancel`` waits for the holder's answer, or for
all answers, at most ``STOP_REPLY_WAIT``. A process remembers a run it stopped a moment ago
(``STOPPED_REMEMBERED``) only to tell a second ``/cancel`` there is nothing to cancel when no
process holds a run of the thread. A process subscribes once, at its first run or stop: no Redis
command is added to an ordinary message. The stop is kept a minute too (``keep``): a process
subscribing again at that moment (a lost connection) gets it once subscribed, and stops the run
then, unless the ``/cancel`` was answered without it meanwhile (``flow.stop_asks``).
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import functools
import logging
import secrets
import time
import weakref
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from clarigate.agent.protocol.models import Locale
from clarigate.gateway.boundary.errors import AgentUnavailable
from clarigate.gateway.boundary.messages import InboundMessage, Notice, Sender
from clarigate.gateway.boundary.outbound_items import LiveEnd, TextReply
from clarigate.gateway.flow.live import LiveReply, finish_items
from clarigate.gateway.flow.notices import notice, notice_for_text
from clarigate.gateway.flow.stop_asks import HELD, Asked, claim_stop
from clarigate.gateway.flow.withdrawals import withdraw_waiting
from clarigate.gateway.store.base import Store
from clarigate.gateway.store.records import Job

if TYPE_CHECKING:
    from clarigate.gateway.flow.progress import WorkingIndicator
    from clarigate.gateway.runners.base import AgentRunner, RunInput

log = logging.getLogger(__name__)

T = TypeVar("T")

#: How long a ``/cancel`` waits for the process holding the run to answer (seconds).
STOP_REPLY_WAIT = 2.0

#: How long a thread's stopped run is remembered (until its next run starts): a second ``/cancel``
#: meanwhile is told there is nothing to cancel, not that the request is still being worked on.
STOPPED_REMEMBERED = 30.0

#: How long a refused ``/cancel``'s note is remembered (seconds): the next ones for the same run
#: and person get no reply (a day: longer than a run goes, ``run_timeout_seconds``).
REFUSAL_REMEMBERED = 24 * 3600


class StopOutcome(enum.Enum):
    """What a ``/cancel`` with no question open did (``RunStops.stop``)."""

    STOPPING = "stopping"  # the sender's run stops: its own "stopped" line answers
    WITHDRAWN = "withdrawn"  # no run of theirs going on: their waiting messages were withdrawn
    NOT_YOURS = "not_yours"  # the run going on is someone else's: told so privately
    NOTHING = "nothing"  # nothing to cancel (perhaps: still working on it)


@dataclass(frozen=True)
class Stop:
    """A ``/cancel``'s outcome and what the person is told (None: the run's own line answers)."""

    outcome: StopOutcome
    reply: TextReply | None


class RunStopped(Exception):
    """The run was stopped by ``/cancel`` (``by``: who sent it)."""

    def __init__(self, by: Sender) -> None:
        super().__init__(f"stopped by {by.user_id}")
        self.by = by


@dataclass
class _Running:
    """A run going on here: whose request it is, its job and its agent call's task."""

    sender: Sender
    job: str  # its job's stream entry id (never withdrawn: it runs)
    started_at: float  # when the run started (unix time)
    task: asyncio.Task[Any]
    stopped_by: Sender | None = None


class RunStops:
    """The runs going on in this process, by chat thread, and ``/cancel``'s way to stop one."""

    def __init__(self, store: Store) -> None:
        self._store = weakref.ref(store)  # not kept alive by its registry entry (``_REGISTRIES``)
        self._running: dict[str, _Running] = {}
        self._stopped: dict[str, float] = {}  # thread key -> when its run was stopped (monotonic)
        self._ended: dict[str, tuple[float, str]] = {}  # thread key -> when its last run ended, its job
        self._asked: dict[str, Asked] = {}  # stops asked of other processes, by nonce
        self._answered: deque[str] = deque(maxlen=256)  # stops answered here (heard twice: once)
        self._id = secrets.token_hex(8)  # (its own asks, heard on the channel, are not answered)
        self._listening: asyncio.Task[None] | None = None

    async def during(self, thread_key: str, sender: Sender, job: Job, call: Callable[[], Awaitable[T]]) -> T:
        """``call()``'s result; raises ``RunStopped`` when a ``/cancel`` stopped it meanwhile."""
        self._listen()
        self._stopped.pop(thread_key, None)  # a new run of the thread: the one stopped is over
        task = asyncio.ensure_future(call())
        running = _Running(sender, job.entry_id, time.time(), task)
        self._running[thread_key] = running
        answered = True  # (its job ends with an answer: not withdrawn meanwhile)
        try:
            return await task
        except AgentUnavailable:
            answered = False  # kept for later: waiting again
            raise
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if running.stopped_by is None or (current is not None and current.cancelling()):
                answered = False
                raise  # stopping, taken over, or past its time: not a /cancel
            raise RunStopped(running.stopped_by) from None
        finally:
            if self._running.get(thread_key) is running:
                del self._running[thread_key]
            if answered:
                self._run_ended(thread_key, job.entry_id)

    def _run_ended(self, thread_key: str, entry_id: str) -> None:
        """Remember for ``STOPPED_REMEMBERED`` that ``entry_id``'s run ended (its answer, an error
        or the stopped line on its way, the job not completed yet: not withdrawn meanwhile)."""
        now = time.monotonic()
        self._ended.pop(thread_key, None)
        self._ended[thread_key] = (now, entry_id)  # (oldest first)
        while self._ended:  # (not a whole pass per run: the oldest only, while too old)
            key, (when, _) = next(iter(self._ended.items()))
            if now - when <= STOPPED_REMEMBERED:
                break
            del self._ended[key]

    @property
    def store(self) -> Store:
        store = self._store()
        if store is None:  # pragma: no cover (only its store's users call this registry)
            raise RuntimeError("the store of this stop registry is gone")
        return store

    async def cancel(
        self, msg: InboundMessage, outstanding: int, locale: Locale, policy: str
    ) -> TextReply | None:
        """What the person is told of their ``/cancel`` with no question open (``stop``)."""
        return (await self.stop(msg, outstanding, locale, policy)).reply

    async def stop(self, msg: InboundMessage, outstanding: int, locale: Locale, policy: str) -> Stop:
        """``/cancel`` with no question open: stop the chat thread's run, here or elsewhere, if
        ``policy`` (``answer_policy``) lets its sender; its outcome (``StopOutcome``) and what the
        person is told: nothing when it stops (the run's own "stopped" line answers, so the two
        never come in the wrong order), nothing to cancel when no run of the thread goes on or it
        was stopped a moment ago. No run of theirs going on, their waiting messages are withdrawn
        (``flow.withdrawals``)."""
        key, by = msg.conversation.thread_key, msg.sender
        sent = msg.received_at - msg.received_within  # (Telegram's whole seconds: the earliest)
        verdict = self._decide(key, by, sent, policy)
        if outstanding and verdict["verdict"] not in HELD:  # no run here: perhaps elsewhere
            verdict = await self._ask_elsewhere(key, by, sent, policy, verdict)
        said = verdict["verdict"]
        ask = None if said in HELD or verdict.get("claimed") else verdict.get("ask")  # (claimed: its
        if ask is not None and not await claim_stop(self.store, ask, True):  # run ended as it took the mark)
            said = "stopping"  # its holder heard it late, and stops it: its own line answers
        if said == "stopping":
            return Stop(StopOutcome.STOPPING, None)
        if outstanding and said in ("none", "going", "refused"):
            withdrawn = await withdraw_waiting(self.store, msg, locale, policy, verdict.get("jobs", []))
            if withdrawn is not None:
                return Stop(StopOutcome.WITHDRAWN, withdrawn)
        if said == "refused":
            return Stop(StopOutcome.NOT_YOURS, await self._refusal(key, by, verdict, locale))
        lines = [notice("nothing_to_cancel", locale)]
        if outstanding and said not in ("stopped", "lately"):
            lines.append(notice("still_working", locale))
        return Stop(StopOutcome.NOTHING, TextReply(text=" ".join(lines)))

    async def _refusal(
        self, thread_key: str, by: Sender, verdict: dict[str, Any], locale: Locale
    ) -> TextReply | None:
        """The private note that the run is not ``by``'s to stop, once per run and person (None
        after the first, as ``QuestionCommands.private_note``: where a platform cannot show a line
        to one member only, the group sees it). The run is its job (``jobs``), whichever process
        decided: the store remembers the note was shown (``REFUSAL_REMEMBERED``)."""
        run = ",".join(str(job) for job in verdict.get("jobs", []))
        if not await self.store.first_time(f"stop-note:{thread_key}:{run}:{by.user_id}", REFUSAL_REMEMBERED):
            log.info("the refusal of a /cancel by %s was shown already: not repeated", by.user_id)
            return None
        refused = Notice.of("stop_not_yours", locale, who=Sender.model_validate(verdict["who"]))
        return TextReply(text=refused.text, private_to=by, notice=refused)

    def stop_own(self, thread_key: str, sender: Sender) -> bool:
        """The person stopped their run from the platform itself (Slack's Stop on its streamed
        message, a terminal's Ctrl-C): ``thread_key``'s run in this process is stopped as their own
        ``/cancel`` would stop it, when it is ``sender``'s; True when it is stopping."""
        running = self._running.get(thread_key)
        if running is None or running.sender.user_id != sender.user_id:
            return False
        verdict = self._decide(thread_key, running.sender, time.time(), "requester")
        return verdict["verdict"] in ("stopping", "stopped")

    def _decide(self, thread_key: str, by: Sender, sent_at: float, policy: str) -> dict[str, Any]:
        """Stop this process's run of ``thread_key`` for ``by`` if they may and sent the ``/cancel``
        after it started (``_judge``): the verdict."""
        verdict = self._judge(thread_key, by, sent_at, policy)
        if verdict["verdict"] == "refused":
            log.info("a /cancel of %s was refused: not the run's requester", by.user_id)
        if verdict["verdict"] == "stopping":
            running = self._running[thread_key]
            log.info("run on %s stopped by %s (/cancel)", thread_key, by.user_id)
            running.stopped_by = by
            running.task.cancel()
            self._stopped[thread_key] = time.monotonic()
        return verdict

    def _judge(self, thread_key: str, by: Sender, sent_at: float, policy: str) -> dict[str, Any]:
        """What a ``/cancel`` would do to this process's run of ``thread_key`` (one of ``HELD``),
        else ``lately`` or ``none`` (``_idle``); nothing done yet."""
        running = self._running.get(thread_key)
        if running is None or (running.task.done() and running.stopped_by is None):
            return self._idle(thread_key)
        held = {"jobs": [running.job]}
        if running.stopped_by is not None:
            return {"verdict": "stopped", **held}
        if sent_at < running.started_at:  # meant for the run before it, or sent maybe before it
            return {"verdict": "going", **held}
        if policy != "anyone" and running.sender.user_id != by.user_id:
            return {"verdict": "refused", "who": running.sender.model_dump(mode="json"), **held}
        return {"verdict": "stopping", **held}

    def _idle(self, thread_key: str) -> dict[str, Any]:
        """No run of ``thread_key`` here: ``lately`` when one was stopped here within
        ``STOPPED_REMEMBERED``, else ``none``; ``jobs``: the job whose run ended here meanwhile."""
        now = time.monotonic()
        for key, when in list(self._stopped.items()):
            if now - when > STOPPED_REMEMBERED:
                del self._stopped[key]
        ended = self._ended.get(thread_key)
        jobs = [ended[1]] if ended is not None and now - ended[0] <= STOPPED_REMEMBERED else []
        return {"verdict": "lately" if thread_key in self._stopped else "none", "jobs": jobs}

    # --- other processes (the store's stop channel) -----------------------------------------

    def _listen(self) -> None:
        if self._listening is None:
            self._listening = asyncio.ensure_future(self.store.listen_stops(self._heard))

    async def _ask_elsewhere(
        self, thread_key: str, by: Sender, sent_at: float, policy: str, here: dict[str, Any]
    ) -> dict[str, Any]:
        """Ask the process holding the thread's run to stop it: its verdict; when none holds one,
        ``here`` (this process's verdict) with the others' (``Asked.verdict``); ``unknown`` when
        the ask could not be sent (a run elsewhere may go on)."""
        self._listen()
        if self._listening is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(self._listening), STOP_REPLY_WAIT)
        nonce, asked = secrets.token_hex(8), Asked([here])
        self._asked[nonce] = asked
        by_json = by.model_dump(mode="json")
        ask = {"op": "stop", "thread": thread_key, "by": by_json, "sent_at": sent_at, "policy": policy}
        try:
            listening = await self.store.publish_stop({**ask, "reply": nonce, "from": self._id}, keep=True)
        except Exception as exc:  # noqa: BLE001 (Redis away, a user without Pub/Sub: not known)
            log.info("the stop of %s could not be sent (%s)", thread_key, type(exc).__name__)
            self._asked.pop(nonce, None)
            return {"verdict": "unknown", "ask": nonce}  # (perhaps kept: replayed later)
        try:
            asked.expect(listening)  # every process answers (this one already has)
            async with asyncio.timeout(STOP_REPLY_WAIT):
                await asked.heard.wait()
        except TimeoutError:
            log.info("not every process answered the stop of %s", thread_key)
        finally:
            self._asked.pop(nonce, None)
        return {**asked.verdict(), "ask": nonce}

    def _heard(self, message: dict[str, Any]) -> None:
        """A message on the stop channel: a stop to decide here (answered: the verdict, ``none``
        when no run of the thread is here), or an answer to a stop asked here."""
        nonce = str(message.get("reply", ""))
        if message.get("op") == "verdict":
            asked = self._asked.get(nonce)
            if asked is not None:
                asked.add(message)
            return
        if message.get("op") != "stop" or message.get("from") == self._id or nonce in self._answered:
            return
        try:
            by = Sender.model_validate(message["by"])
            stop = (str(message["thread"]), by, float(message["sent_at"]), str(message["policy"]))
        except (KeyError, TypeError, ValueError):
            return
        if nonce:
            self._answered.append(nonce)
        task = asyncio.ensure_future(self._answer(nonce, *stop))
        task.add_done_callback(functools.partial(_not_answered, stop[0]))

    async def _answer(self, nonce: str, thread_key: str, by: Sender, sent_at: float, policy: str) -> None:
        """Decide a stop asked by another process and answer it. The run is stopped only if the
        ``/cancel`` was not answered without this process meanwhile (``claim_stop``: heard late, or
        replayed once subscribed again): else it goes on, and answers."""
        judged = verdict = self._judge(thread_key, by, sent_at, policy)
        if verdict["verdict"] != "stopping":
            verdict = self._decide(thread_key, by, sent_at, policy)
        elif await claim_stop(self.store, nonce, False):
            verdict = self._decide(thread_key, by, sent_at, policy)
            if verdict["verdict"] not in ("stopping", "stopped"):  # the run ended meanwhile: the
                jobs = list(dict.fromkeys([*judged["jobs"], *verdict.get("jobs", [])]))  # /cancel answers
                verdict = {**verdict, "jobs": jobs, "claimed": True}  # (``Asked.verdict``)
        else:
            log.info("a stop of %s came after its /cancel was answered: the run goes on", thread_key)
            verdict = {**verdict, "verdict": "going"}
        await self.store.publish_stop({**verdict, "op": "verdict", "reply": nonce, "from": self._id})


def _not_answered(thread_key: str, done: asyncio.Task[None]) -> None:
    """A stop asked by another process that could not be answered (its verdict not published):
    said; the ``/cancel`` is answered without it (``STOP_REPLY_WAIT``)."""
    if not done.cancelled() and (exc := done.exception()) is not None:
        log.warning("the stop of %s could not be answered (%s)", thread_key, type(exc).__name__)


#: The stop registry of each store (one per process and store: every gateway on it shares it).
_REGISTRIES: weakref.WeakKeyDictionary[Store, RunStops] = weakref.WeakKeyDictionary()


def stops_of(store: Store) -> RunStops:
    """The runs going on in this process on ``store`` (``Control`` and ``AgentRun`` share it)."""
    found = _REGISTRIES.get(store)
    if found is None:
        found = _REGISTRIES[store] = RunStops(store)
    return found


async def said_stopped(
    runner: AgentRunner,
    run: RunInput,
    turn: Any,
    live: LiveReply | None,
    working: WorkingIndicator | None,
    first: int,
) -> None:
    """A run ``/cancel`` stopped: stopped where it runs (a LangGraph server: ``abandon``), its
    progress finished, and one plain line (not an error) added to ``turn``'s items."""
    await runner.abandon(run, stopped=True)
    if working is not None:
        await working.finish()
    turn.add(TextReply(text=notice_for_text("run_stopped", run.text, turn.hint), from_agent=False))
    if live is not None:
        result = await live.finish()
        if result.stopped and result.ref is not None:  # the person stopped it: it keeps what it showed,
            turn.items.insert(first, LiveEnd(ref=result.ref))  # the line comes as a message of its own
        else:
            finish_items(result, turn.items, first)
