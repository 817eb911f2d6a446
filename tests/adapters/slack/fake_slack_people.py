"""The fake Slack's workspace (part of ``FakeSlack``): its ids and tokens, and the people,
channels and user groups it knows, as ``users.info``, ``conversations.info`` and
``usergroups.list`` answer them (a scope in ``missing_scopes`` refused with ``missing_scope``,
naming the scope needed and the one provided, as Slack does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .fake_stream import BOT_ID

if TYPE_CHECKING:
    from .fake_slack import ApiCall

BOT_TOKEN = "xoxb-test-token"
TEAM_ID = "T0TEAM"
BOT_USER_ID = "U0BOT"
APP_TOKEN = "xapp-test-token"
PEOPLE_METHODS = {"users.info", "conversations.info", "usergroups.list"}


class PeopleMethods:
    """``FakeSlack``'s people, channels and groups (its fields: ``users``, ``channels``,
    ``usergroups``, ``missing_scopes``, ``calls``, ``bot_name``, ``bot_display_name``)."""

    calls: list[ApiCall]
    users: dict[str, dict[str, Any]]
    channels: dict[str, dict[str, Any]]
    usergroups: dict[str, dict[str, Any]]
    missing_scopes: set[str]
    bot_name: str
    bot_display_name: str

    def add_user(
        self, user_id: str, display_name: str = "", real_name: str = "", name: str = "", locale: str = "en-US"
    ) -> None:
        """A person ``users.info`` knows, shaped as Slack's user object (``locale``: asked for)."""
        self.users[user_id] = {
            "locale": locale,
            "id": user_id,
            "team_id": TEAM_ID,
            "name": name or user_id.lower(),
            "real_name": real_name,
            "is_bot": False,
            "profile": {"display_name": display_name, "real_name": real_name},
        }

    def add_channel(self, channel_id: str, name: str, *, private: bool = False) -> None:
        """A channel ``conversations.info`` knows, shaped as Slack's conversation object."""
        kind = {"is_channel": not private, "is_group": private, "is_private": private, "is_im": False}
        self.channels[channel_id] = {"id": channel_id, "name": name, **kind, "is_archived": False}

    def add_usergroup(self, group_id: str, handle: str, name: str) -> None:
        """A user group ``usergroups.list`` lists, shaped as Slack's usergroup object."""
        self.usergroups[group_id] = {"id": group_id, "team_id": TEAM_ID, "name": name, "handle": handle}
        self.usergroups[group_id] |= {"is_usergroup": True, "date_delete": 0, "user_count": 2}

    def bot_user(self) -> dict[str, Any]:
        """The bot user as ``users.info`` shows it: its username (``name``, what auth.test calls
        ``user``) and the name Slack shows for it, the app's bot display name (``real_name``)."""
        profile = {"real_name": self.bot_display_name, "display_name": "", "bot_id": BOT_ID}
        return {
            "id": BOT_USER_ID,
            "team_id": TEAM_ID,
            "name": self.bot_name,
            "real_name": self.bot_display_name,
            "is_bot": True,
            "locale": "en-US",
            "profile": {**profile, "api_app_id": "A0APP", "always_active": True},
        }

    def people_asked(self) -> list[str]:
        """Whom ``users.info`` was asked about (failed calls too), oldest first: people, not the
        bot user, whose shown name the adapter asks for once at start."""
        asked = [c for c in self.calls if c.method == "users.info"]
        return [str(c.params["user"]) for c in asked if c.params["user"] != BOT_USER_ID]

    def _answer_people(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """``users.info``, ``conversations.info`` or ``usergroups.list`` (``PEOPLE_METHODS``)."""
        if method == "users.info":  # https://api.slack.com/methods/users.info
            if "users:read" in self.missing_scopes:
                refused = {"ok": False, "error": "missing_scope", "needed": "users:read"}
                return {**refused, "provided": "chat:write"}  # Slack names both scopes
            asked = str(params.get("user"))
            user = self.users.get(asked) or (self.bot_user() if asked == BOT_USER_ID else None)
            if user and str(params.get("include_locale")).lower() not in ("true", "1"):
                user = {k: v for k, v in user.items() if k != "locale"}  # only asked for, as Slack does
            return {"ok": True, "user": user} if user else {"ok": False, "error": "user_not_found"}
        if method == "conversations.info":  # https://api.slack.com/methods/conversations.info
            return self._conversation(str(params.get("channel")))
        # usergroups.list: https://api.slack.com/methods/usergroups.list
        if "usergroups:read" in self.missing_scopes:
            return {
                "ok": False,
                "error": "missing_scope",
                "needed": "usergroups:read",
                "provided": "chat:write",
            }
        return {"ok": True, "usergroups": list(self.usergroups.values())}

    def _conversation(self, channel_id: str) -> dict[str, Any]:
        """``conversations.info``: ``channels:read`` for a public channel, ``groups:read`` a private one."""
        channel = self.channels.get(channel_id)
        needed = "groups:read" if channel and channel["is_private"] else "channels:read"
        if needed in self.missing_scopes:
            return {"ok": False, "error": "missing_scope", "needed": needed, "provided": "chat:write"}
        return {"ok": True, "channel": channel} if channel else {"ok": False, "error": "channel_not_found"}
