"""The console platform: ``clarigate chat`` talks to the bot through the same port and core as
Slack, Feishu and Telegram."""

from .adapter import ConsoleAdapter

__all__ = ["ConsoleAdapter"]
