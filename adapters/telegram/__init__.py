"""Telegram: inline keyboards, step-by-step forms, webhook and leased long polling."""

from .adapter import TelegramAdapter

__all__ = ["TelegramAdapter"]
