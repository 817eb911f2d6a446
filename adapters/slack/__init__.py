"""Slack: Block Kit clarifications, Events API and interactivity, HTTP and Socket Mode."""

from .adapter import SlackAdapter, SlackStartError

__all__ = ["SlackAdapter", "SlackStartError"]
