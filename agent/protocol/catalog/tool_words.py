"""The catalog's lines the model reads in place of a tool call's result (part of ``WORDS``): a
call that got no result, as the run stopped or restarted, or as its tool server was unavailable."""

from __future__ import annotations

from ..models import Locale

TOOL_WORDS: dict[str, dict[Locale, str]] = {
    # a call the run stopped before it returned (agent/history.py), or a restart cut (takeover.py)
    "call_left_open": {
        "en": "No result: the run stopped before this call returned, and the person has written "
        "since. Whether it took effect is not known; do not run it again unless they ask for it.",
        "zh": "没有结果：运行在这个调用返回之前停止了，之后用户又发送了消息。"
        "不知道它是否已生效；除非用户要求，否则不要再次执行。",
    },
    "call_did_not_finish": {
        "en": "No result: the run stopped before this call returned. "
        "Whether it took effect is not known; check before calling it again.",
        "zh": "没有结果：运行在这个调用返回之前停止了。不知道它是否已生效；再次调用之前请先确认。",
    },
    "call_cut_by_restart": {
        "en": "Interrupted by a restart: the tool {name} was running when the service restarted, "
        "so it may or may not have finished. It was not run again. Tell the person, and check "
        "before running it again.",
        "zh": "因服务重启而中断：工具 {name} 运行时服务重启了，它可能已完成，也可能没有。它没有被再次执行。"
        "请告诉用户，并在再次执行之前先确认。",
    },
    # a call whose MCP server is down or closed (agent/tool_errors.py)
    "tool_server_unavailable": {
        "en": "The tool server '{server}' is unavailable right now, so this call got no result. "
        "You may try it again later, or go on without it.",
        "zh": "工具服务器 '{server}' 目前不可用，因此这个调用没有结果。你可以稍后再试，或者不用它继续。",
    },
    # a call in flight when its MCP server's connection closed: it may have taken effect
    "tool_server_closed": {
        "en": "No result: the tool server '{server}' closed its connection before this call "
        "returned. Whether it took effect is not known; check before calling it again.",
        "zh": "没有结果：工具服务器 '{server}' 在这个调用返回之前关闭了连接。"
        "不知道它是否已生效；再次调用之前请先确认。",
    },
}
