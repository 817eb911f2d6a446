"""The Bolt ``AsyncApp`` the Slack adapter receives through, on the adapter's own Web API client."""

from __future__ import annotations

import logging

from slack_bolt.async_app import AsyncApp
from slack_bolt.logger.messages import warning_client_prioritized_and_token_skipped
from slack_sdk.web.async_client import AsyncWebClient


def build_bolt_app(client: AsyncWebClient, signing_secret: str) -> AsyncApp:
    """Bolt with ``client``: work before ack (an exception answers 500: Slack redelivers), and
    unhandled requests raised for the adapter's error handler (200 and a count, not Bolt's 404).

    Given no ``token``, Bolt reads ``SLACK_BOT_TOKEN`` itself, then warns that ``client`` wins over
    it: with the token set as documented, a warning about nothing on every start. That one line,
    logged while the app is built, is dropped; Bolt's other lines are not.
    """
    framework = logging.getLogger(f"slack_bolt.{AsyncApp.__name__}")  # Bolt's get_bolt_logger(AsyncApp)
    unused_token = warning_client_prioritized_and_token_skipped()

    def keep(record: logging.LogRecord) -> bool:
        return record.getMessage() != unused_token

    framework.addFilter(keep)
    try:
        return AsyncApp(
            client=client,
            signing_secret=signing_secret,
            process_before_response=True,
            raise_error_for_unhandled_request=True,
            # Bolt logs under its app name and sets that logger's level by assignment: a name
            # outside the package's own logger tree keeps ours untouched
            name="clarigate-slack",
        )
    finally:
        framework.removeFilter(keep)
