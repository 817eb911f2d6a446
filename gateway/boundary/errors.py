"""clarigate's errors: one base class, and the few errors that cross the adapter boundary.

Two kinds matter at the HTTP edge (``clarigate.gateway.web.server.InputGuard``):

- ``BadRequest``: the platform (or someone posing as it) sent a request our code cannot use:
  JSON that does not parse, a missing or wrong-typed field, a signed payload of a shape
  nothing here handles. Raised on purpose where the payload is read; answered with its 4xx
  status and one WARNING line, and never retried by the platform for our sake.
- The store (Redis) unreachable while a request is handled (``store.connection.unreachable``)
  is our outage: answered 503 with ``Retry-After`` (so the platform redelivers), one WARNING
  line per outage, counted in ``clarigate_http_unavailable_total``.
- Anything else raised while a request is handled is our bug: answered 500 (so the platform
  redelivers), logged at ERROR with its traceback and counted in ``clarigate_http_errors_total``.
  Nothing else is dressed up as the client's mistake.

``DeliveryFailed`` is how an adapter's ``send`` reports a platform refusing or failing a call;
``LiveSkipped`` how its ``show_live`` reports an update the platform's budget had no room for,
``LiveStopped`` a live message the person stopped (Slack's Stop);
``AgentUnavailable`` and ``RunFailed`` are how an agent runner reports a turn that did not happen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .messages import MessageRef


class ClarigateError(Exception):
    """The base of every error clarigate raises on purpose."""


class BadRequest(ClarigateError):
    """A request the platform sent that our code cannot use, answered ``status`` (a 4xx).

    ``reason`` is one line in our own words, logged and sent back as the answer's body: it
    names what is wrong (``"message event without a chat id"``), never quotes the request
    (which may hold a person's words or a token).
    """

    def __init__(self, reason: str, *, status: int = 400) -> None:
        if not 400 <= status < 500:
            raise ValueError(f"a bad request is answered with a 4xx status, not {status}")
        super().__init__(reason)
        self.reason = reason
        self.status = status


class DeliveryFailed(ClarigateError):
    """An adapter could not deliver an outbound item, classified for the core's delivery step.

    ``permanent``: no retry can help (the bot was blocked or removed, the payload was refused
    as invalid, the chat is gone); the core falls back once (a question's text fallback) or
    gives up with a log line and a metric. Otherwise transient (rate limit, 5xx, network):
    retried with backoff within the delivery budget, not before ``retry_after`` seconds when
    the platform named a time. ``code`` is the platform's own error code, for logs and metrics.
    ``chat_refused``: the chat takes nothing from the bot (blocked, kicked, no right to write
    there): no other rendering nor item can get through, so the delivery to it ends at once.
    Any other exception an adapter's ``send`` raises is treated as transient.
    """

    def __init__(
        self,
        message: str,
        *,
        permanent: bool,
        retry_after: float | None = None,
        code: str | None = None,
        chat_refused: bool = False,
    ) -> None:
        super().__init__(message)
        self.permanent = permanent or chat_refused
        self.retry_after = retry_after
        self.code = code
        self.chat_refused = chat_refused


class LiveSkipped(ClarigateError):
    """An adapter's ``show_live``: this update found no room in the platform's budget and made no
    call (the live message shows what it showed before). ``retry_in``: seconds until the next
    slot may be had (the next window of the shared pace: ``clarigate.adapters.pacing``)."""

    def __init__(self, retry_in: float) -> None:
        super().__init__(f"live update skipped: the next slot in {retry_in:.3f} s")
        self.retry_in = retry_in


class AttachmentTooLarge(ClarigateError):
    """An adapter's ``fetch_attachment``: the file is over the size cap it was given (``size``:
    its bytes, when known), as opposed to one that cannot be had at all (None)."""

    def __init__(self, size: int | None = None) -> None:
        super().__init__(f"over the size cap ({size} bytes)" if size else "over the size cap")
        self.size = size


class AgentUnavailable(ClarigateError):
    """The agent cannot be reached now (a server down, a timeout, a 5xx, its checkpointer
    unreachable or locked: ``runners.outages``): the message is kept and runs once the agent is
    back; the person is told it is delayed when it lasts more than a few seconds."""


class RunFailed(ClarigateError):
    """The agent's run ended in an error; ``run_id`` names it where the agent has such ids."""

    def __init__(self, message: str, *, run_id: str | None = None) -> None:
        super().__init__(message)
        self.run_id = run_id


class LiveStopped(ClarigateError):
    """An adapter's ``show_live``: the person stopped the live message on the platform (Slack's
    Stop on a streamed message). It takes no more updates nor the reply and keeps what it showed
    (``ref``: its reference now, for the reply that ends it); the core stops the run as the
    requester's ``/cancel`` would (``flow.stops``), and says so in a message of its own."""

    def __init__(self, ref: MessageRef) -> None:
        super().__init__("the person stopped the live message")
        self.ref = ref
