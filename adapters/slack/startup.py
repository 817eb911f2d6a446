"""The Slack adapter's start and ``doctor``'s look at the credentials.

The bot token is checked with ``auth.test``; in Socket Mode the app-level token with
``apps.connections.open``, the call slack_sdk's Socket Mode client makes for its WebSocket URL
(and the way Slack documents checking an app token). At start both go by the start-up policy
(``STARTUP_RETRIES``): a transient failure (the network, a 5xx, a rate limit) is tried again, a
refusal stops the start at once, one line naming the variable (``serve`` exits 7). Left to the
Socket Mode client, a refused app token was asked again every 10 seconds for good, a traceback
each time, while the port never opened. ``doctor`` makes each call once.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from clarigate.adapters.slack.settings import SlackSettings
from clarigate.gateway.boundary.port import DeliveryFailed
from clarigate.gateway.boundary.retry import RetryPolicy

from .send import SlackSender

#: Each start-up call: four attempts, 0.5 s, 1 s, 2 s apart (after Slack's ``Retry-After`` if longer).
STARTUP_RETRIES = RetryPolicy(first=0.5, attempts=4)

BOT_TOKEN, APP_TOKEN = "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN"
#: Where each token is found again, for the line that says Slack refused it.
WHERE = {
    BOT_TOKEN: "the bot token (xoxb-…) of the installed app, under OAuth & Permissions",
    APP_TOKEN: "the app-level token (xapp-…, scope connections:write), under Basic Information",
}


class SlackStartError(RuntimeError):
    """Slack refused the configured credentials (or could not be reached)."""


def start_failure(error: DeliveryFailed, variable: str, api_url: str) -> SlackStartError:
    """Why the start stops, in one line: Slack unreachable or failing, or ``variable`` refused."""
    if error.code == "network":
        return SlackStartError(f"Slack API unreachable at {api_url}: {error}")
    if not error.permanent:  # the policy's attempts are spent
        return SlackStartError(f"Slack API at {api_url} kept failing ({error.code}): try again later")
    return SlackStartError(f"Slack rejected {variable} ({error.code}): check {WHERE[variable]}")


async def sign_in(sender: SlackSender, api_url: str) -> dict[str, Any]:
    """``auth.test`` with the bot token: the bot's team, user and name; a refusal stops the start."""
    try:
        return await STARTUP_RETRIES.call(sender.whoami)
    except DeliveryFailed as error:
        raise start_failure(error, BOT_TOKEN, api_url) from error


async def socket_url(sender: SlackSender, app_token: str, api_url: str) -> str:
    """A Socket Mode WebSocket URL for the app token (``apps.connections.open``); a refusal stops
    the start."""
    try:
        return await STARTUP_RETRIES.call(lambda: sender.socket_url(app_token))
    except DeliveryFailed as error:
        raise start_failure(error, APP_TOKEN, api_url) from error


async def credential_problems(settings: SlackSettings, sender: SlackSender) -> list[str]:
    """For ``doctor``: a way to receive, and each configured token taken by Slack (one call each)."""
    if settings.signing_secret is None and settings.app_token is None:
        return ["SLACK_SIGNING_SECRET is not set (needed for HTTP mode; or set SLACK_APP_TOKEN)"]
    checks: list[tuple[str, Callable[[], Awaitable[object]]]] = [(BOT_TOKEN, sender.whoami)]
    if settings.app_token is not None:
        app_token = settings.app_token.get_secret_value()
        checks.append((APP_TOKEN, lambda: sender.socket_url(app_token)))
    problems: list[str] = []
    for variable, call in checks:
        try:
            await call()
        except DeliveryFailed as error:
            if error.code == "network":  # one line says it: the other call cannot get through either
                return [f"Slack API unreachable at {settings.api_url}: {error}"]
            if error.permanent:  # serve's words, with where the right token is
                problems.append(f"Slack rejected {variable} ({error.code}): check {WHERE[variable]}")
            else:
                problems.append(f"Slack API at {settings.api_url} failed checking {variable}: {error.code}")
    return problems
