"""The fake Slack's file uploads, as slack_sdk's ``files_upload_v2`` makes them (part of ``FakeSlack``).

``files.getUploadURLExternal`` (``filename`` and ``length`` required, else ``invalid_arguments``)
answers a file id and an upload URL on this server; the POST to that URL takes the bytes
(answering ``OK - <length>``, 404 for an unknown URL); ``files.completeUploadExternal`` takes
``files`` (a JSON array of ``{"id", "title"}``) and shares each file in ``channel_id`` (in
``thread_ts``'s thread) with ``initial_comment``: a file never uploaded is ``file_not_found``
(the upload's length must match, as Slack checks). Completing a file again shares it again
(Slack's answer to that case is not documented: the fake assumes the worst). ``files.info`` of
an uploaded file says where it is shared (``shares``: ``public`` / ``private`` by channel id,
each share with its ``ts`` and ``thread_ts``; ``channels`` / ``groups`` / ``ims``).
``lose_completions`` makes the next completions share the file and answer ``fatal_error`` all
the same, as a share whose answer was lost.

``FileMethods`` serves the files people shared: ``files.info`` (form-encoded arguments only, as
Slack documents it) and ``/files-pri/…``, which gives the bytes to the bot token and, like
Slack, its HTML sign-in page to anyone else.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from .fake_slack_people import BOT_TOKEN, TEAM_ID

SIGN_IN_PAGE = "<!DOCTYPE html><html><head><title>Slack</title></head><body>Sign in</body></html>"


@dataclass
class SharedFile:
    """A file the bot shared: where, with what comment, and its bytes."""

    file_id: str
    title: str
    name: str
    data: bytes
    channel: str
    thread_ts: str | None
    comment: str | None


@dataclass
class SlackUploads:
    """Uploads in progress and the files shared, as people see them."""

    port: int = 0
    pending: dict[str, dict[str, Any]] = field(default_factory=dict)  # file id -> filename, length, data
    shared: list[SharedFile] = field(default_factory=list)
    failing_uploads: list[int] = field(default_factory=list)  # HTTP statuses of the next upload POSTs
    lose_completions: int = 0  # completions that share the file but answer fatal_error
    _ids: itertools.count = field(default_factory=lambda: itertools.count(1))

    def answer(self, method: str, params: dict[str, Any]) -> dict[str, Any] | None:
        """The answer to a files method, or None for a method not handled here."""
        if method == "files.getUploadURLExternal":
            return self._upload_url(params)
        if method == "files.completeUploadExternal":
            answer = self._complete(params)
            if answer["ok"] and self.lose_completions:
                self.lose_completions -= 1
                return {"ok": False, "error": "fatal_error"}
            return answer
        if method == "files.info" and str(params.get("file")) in self.pending:
            return {"ok": True, "file": self.file_object(str(params["file"]))}
        return None

    def file_object(self, file_id: str) -> dict[str, Any]:
        """An uploaded file as ``files.info`` describes it: where it is shared."""
        upload = self.pending[file_id]
        shares: dict[str, dict[str, list[dict[str, Any]]]] = {"public": {}, "private": {}}
        lists: dict[str, list[str]] = {"channels": [], "groups": [], "ims": []}
        for share in (s for s in self.shared if s.file_id == file_id):
            kind = "public" if share.channel.startswith("C") else "private"
            entry = {"ts": f"1700000001.{len(self.shared):06d}", "thread_ts": share.thread_ts}
            shares[kind].setdefault(share.channel, []).append(entry)
            group = {"C": "channels", "G": "groups", "D": "ims"}.get(share.channel[:1], "channels")
            lists[group].append(share.channel)
        return {
            "id": file_id,
            "name": upload["filename"],
            "title": upload["filename"],
            "shares": shares,
            **lists,
        }

    def _upload_url(self, params: dict[str, Any]) -> dict[str, Any]:
        name, length = str(params.get("filename") or ""), str(params.get("length") or "")
        if not name or not length.isdigit():
            return {"ok": False, "error": "invalid_arguments"}
        file_id = f"F0UP{next(self._ids):04d}"
        self.pending[file_id] = {"filename": name, "length": int(length), "data": None}
        url = f"http://127.0.0.1:{self.port}/upload/v1/{file_id}"
        return {"ok": True, "upload_url": url, "file_id": file_id}

    async def receive(self, request: web.Request) -> web.Response:
        """The POST of a file's bytes to its upload URL."""
        file_id = request.match_info["file_id"]
        data = await request.read()
        if self.failing_uploads:
            return web.Response(status=self.failing_uploads.pop(0), text="upload failed")
        if file_id not in self.pending:
            return web.Response(status=404, text="not found")
        self.pending[file_id]["data"] = data
        return web.Response(text=f"OK - {len(data)}")

    def _complete(self, params: dict[str, Any]) -> dict[str, Any]:
        try:
            files = json.loads(params.get("files") or "")
        except ValueError:
            return {"ok": False, "error": "invalid_arguments"}
        if not isinstance(files, list) or not files:
            return {"ok": False, "error": "invalid_arguments"}
        channel, thread = str(params.get("channel_id") or ""), params.get("thread_ts") or None
        answered = []
        for entry in files:
            upload = self.pending.get(str(entry.get("id")))
            if upload is None or upload["data"] is None or len(upload["data"]) != upload["length"]:
                return {"ok": False, "error": "file_not_found"}
            answered.append({"id": entry["id"], "title": entry.get("title") or upload["filename"]})
        for entry in answered:
            if channel:
                upload = self.pending[entry["id"]]
                self.shared.append(
                    SharedFile(
                        entry["id"],
                        entry["title"],
                        upload["filename"],
                        upload["data"],
                        channel,
                        thread,
                        params.get("initial_comment") or None,
                    )
                )
        return {"ok": True, "files": answered}


class FileMethods:
    """``FakeSlack``'s shared files (its fields: ``files``, ``file_objects``, ``port``, ``_arrivals``)."""

    files: dict[str, tuple[bytes, str]]
    file_objects: dict[str, dict[str, Any]]
    port: int
    _arrivals: dict[str, int]

    def add_file(self, file_id: str, name: str, data: bytes, mimetype: str) -> dict[str, Any]:
        """Store a file and return its ``files`` entry as a message event carries it."""
        path = f"{TEAM_ID}-{file_id}/download/{name}"
        self.files[path] = (data, mimetype)
        base = f"http://127.0.0.1:{self.port}/files-pri/"
        self.file_objects[file_id] = {
            "id": file_id,
            "created": 1700000000,
            "timestamp": 1700000000,
            "name": name,
            "title": name,
            "mimetype": mimetype,
            "filetype": name.rsplit(".", 1)[-1],
            "pretty_type": name.rsplit(".", 1)[-1].upper(),
            "user": "U1",
            "mode": "hosted",
            "editable": False,
            "is_external": False,
            "external_type": "",
            "size": len(data),
            "url_private": f"{base}{TEAM_ID}-{file_id}/{name}",
            "url_private_download": f"{base}{path}",
        }
        return dict(self.file_objects[file_id])

    def add_connect_file(self, file_id: str, name: str, data: bytes, mimetype: str) -> dict[str, Any]:
        """A file shared from another organisation: stored, and returned as a message event carries
        it in a Slack Connect channel, its id alone (https://api.slack.com/types/file#slack_connect_files)."""
        self.add_file(file_id, name, data, mimetype)
        return {
            "id": file_id,
            "mode": "file_access",
            "file_access": "check_file_info",
            "created": 0,
            "timestamp": 0,
            "user": "",
        }

    def _file_info(self, params: dict[str, Any]) -> dict[str, Any]:
        """``files.info`` of a file people shared."""
        file = self.file_objects.get(str(params.get("file")))
        return {"ok": True, "file": file} if file else {"ok": False, "error": "file_not_found"}

    async def _file(self, request: web.Request) -> web.Response:
        self._arrivals["files-pri"] = self._arrivals.get("files-pri", 0) + 1
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        stored = self.files.get(request.match_info["path"])
        if token != BOT_TOKEN or stored is None:
            return web.Response(text=SIGN_IN_PAGE, content_type="text/html")
        data, mimetype = stored
        return web.Response(body=data, content_type=mimetype)
