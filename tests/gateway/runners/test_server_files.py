"""A LangGraph server's thread state carries the turn's files as the in-process agent's does: the
final message's content blocks and the tools' artifacts come through ``messages_of`` intact."""

from __future__ import annotations

import base64

from clarigate.agent.harness import turn_output
from clarigate.gateway.runners.server_wire import messages_of

CSV = b"a,b\n1,2\n"


def test_files_in_a_server_thread_state_are_the_turns_files():
    csv = {
        "type": "file",
        "base64": base64.b64encode(CSV).decode(),
        "mime_type": "text/csv",
        "filename": "r.csv",
    }
    chart = {"type": "image", "url": "https://example.com/chart.png"}
    values = {  # as the server sends a thread's state: messages as dicts, with server-side extras
        "messages": [
            {"type": "human", "content": "report", "id": "h1"},
            {"type": "ai", "content": "", "id": "a1", "tool_calls": [{"name": "r", "args": {}, "id": "t1"}]},
            {
                "type": "tool",
                "content": "Made r.csv",
                "tool_call_id": "t1",
                "artifact": [csv],
                "status": "success",
            },
            {"type": "ai", "content": [{"type": "text", "text": "Done."}, chart], "invalid_tool_calls": []},
        ]
    }
    output = turn_output(messages_of(values), [])  # a new thread
    assert output.replies == ["Done."]
    assert [(f.name, f.data, f.url) for f in output.files] == [
        ("r.csv", CSV, None),
        ("chart.png", None, "https://example.com/chart.png"),
    ]
