"""Replies with code that a cut across messages must keep as code, for the splitters of every
platform (Slack, Telegram, Feishu): a "```" line inside code, code inside a list item or quote."""

from __future__ import annotations

#: Indented code holding a "```" line: read as a fence, it would end the code or start more.
STRAY_FENCE = "\n".join([f"    step {n} of the code" for n in range(12)] + ["    ```", "    more code"])

#: Code blocks a cut may fall inside, each with a stray "```" or in a block that holds code.
CODE_IN_BLOCKS = [
    STRAY_FENCE,  # indented code holding a ``` line
    "````\n" + STRAY_FENCE.replace("    ", "") + "\n````",  # a fenced block holding one
    "1. the script:\n\n   ````\n" + STRAY_FENCE.replace("    ", "   ") + "\n   ````",  # in a list item
    "> ````\n" + STRAY_FENCE.replace("    ", "> ") + "\n> ````",  # in a quote
    "```\n" + "step " * 40 + "```\nmore code\n```",  # a line ending in ```, cut before it
]

#: What property tests build replies with code from: words, backticks, fences, list and quote
#: markers, indentation.
CODE_PIECES = [
    *("word ", "代码", "`", "```", "~~~", "\n", "\n\n", "\n    ", "\n```\n", "\n````\n", "\n~~~\n"),
    *("\n- ", "\n1. ", "\n> ", "\n   ", "\n  ```\n", "\n   ```\n", "\n> ```\n", "\n\n    ```\n"),
]
