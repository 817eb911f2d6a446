"""A person's 👍/👎 as LangSmith feedback on the traced run that gave the answer.

Only while tracing is on (LangChain's standard ``LANGSMITH_TRACING`` and friends, read by
``langsmith`` itself, which LangChain installs) and when the runner named the run. One feedback
per person and answer: its id is derived from the answer's token and the person, created on the
first vote and updated when the vote changes, so the run carries the vote that stands. Scores:
1 for 👍, 0 for 👎, under the key ``user_vote``. Never raises: a LangSmith that is down costs a
WARNING, not the click.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
import warnings
from typing import Any

log = logging.getLogger(__name__)

#: The feedback key votes are recorded under in LangSmith.
FEEDBACK_KEY = "user_vote"
#: The namespace of feedback ids (uuid5 of the answer's token and the person).
FEEDBACK_NAMESPACE = uuid.UUID("6b1d3c55-2f0e-4c8e-9a1f-3d2b7c9e5a41")
#: Attempts of one LangSmith call (the client's default of 10 would hold a thread for minutes).
ATTEMPTS = 2

_client: Any = None


def tracing_on() -> bool:
    """True when LangSmith is installed and tracing is switched on."""
    try:
        from langsmith.utils import tracing_is_enabled
    except ImportError:
        return False
    return bool(tracing_is_enabled())


def feedback_id(token: str, person: str) -> uuid.UUID:
    """The one LangSmith feedback of ``person`` on the answer behind ``token``."""
    return uuid.uuid5(FEEDBACK_NAMESPACE, f"{token}:{person}")


def _langsmith() -> Any:
    """One LangSmith client per process (it reads its endpoint and key from the environment)."""
    global _client
    if _client is None:
        from langsmith import Client

        _client = Client()
    return _client


def forget_client() -> None:
    """Drop the process's client (tests that point LangSmith elsewhere)."""
    global _client
    _client = None


def _send(run_id: str, token: str, person: str, vote: str, platform: str, first: bool) -> None:
    """The blocking LangSmith call: create the person's feedback, or change its score."""
    client, fid, score = _langsmith(), feedback_id(token, person), 1 if vote == "up" else 0
    with warnings.catch_warnings():  # run-level feedback without a project id is deprecated, not refused
        warnings.simplefilter("ignore")
        if first:
            client.create_feedback(
                run_id=run_id,
                key=FEEDBACK_KEY,
                score=score,
                value=vote,
                feedback_id=fid,
                source_info={"platform": platform},
                stop_after_attempt=ATTEMPTS,
            )
        else:
            client.update_feedback(fid, score=score, value=vote)


async def trace_vote(run_id: str, token: str, person: str, vote: str, platform: str, first: bool) -> None:
    """Send the vote to LangSmith (in a thread: the client is blocking) when tracing is on."""
    if not tracing_on():
        return
    try:
        await asyncio.to_thread(_send, run_id, token, person, vote, platform, first)
    except Exception as exc:  # noqa: BLE001 (tracing is a nicety: the vote is recorded here)
        log.warning("LangSmith feedback on run %s failed: %s", run_id, type(exc).__name__)
