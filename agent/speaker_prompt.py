"""The built-in agent tells the model who is speaking in a group chat or a channel.

Several people write in one thread there; the run's speaker (``clarigate.agent.who``, in the
run's ``configurable``) names the one whose message this run answers. The line goes into the
system prompt of each model call (never into the thread's messages), so a later run names its
own speaker. A display name is the person's own text: put on one line and cut.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest
from langchain_core.messages import SystemMessage

from clarigate.agent.who import Speaker, speaker_of

#: How much of a display name the model reads.
MAX_NAME = 80
_PLACES = {"group": "a group chat", "channel": "a channel"}


def speaker_line(speaker: Speaker | None) -> str | None:
    """The prompt's line about who speaks, for a group chat or a channel; None elsewhere."""
    if not speaker:
        return None
    conversation = speaker.get("conversation") or {}
    place = _PLACES.get(str(conversation.get("chat_type")))
    sender = speaker.get("sender") or {}
    user_id = _one_line(str(sender.get("user_id") or ""))
    if place is None or not user_id:
        return None
    name = _one_line(str(sender.get("display_name") or ""))
    who = f"{name} (user id {user_id})" if name else f"the user with id {user_id}"
    platform = _one_line(str(conversation.get("platform") or ""))
    where = f"{place} on {platform}" if platform else place
    return (
        f"This conversation is {where}, where several people write. "
        f"The latest message is from {who}; earlier messages may be from other people."
    )


def _one_line(text: str) -> str:
    return " ".join(text.split())[:MAX_NAME]


class SpeakerPromptMiddleware(AgentMiddleware):  # type: ignore[type-arg]
    """Adds ``speaker_line`` to the system prompt of each model call of a group's run."""

    @staticmethod
    def _told(request: ModelRequest) -> ModelRequest:
        from langgraph.config import get_config

        try:
            line = speaker_line(speaker_of(get_config()))
        except RuntimeError:  # called outside a run (no config)
            line = None
        if line is None:
            return request
        prompt = request.system_prompt
        return request.override(system_message=SystemMessage(f"{prompt}\n\n{line}" if prompt else line))

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        """Call the model knowing who speaks."""
        return handler(self._told(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[Any]]
    ) -> Any:
        """Async twin of ``wrap_model_call``."""
        return await handler(self._told(request))
