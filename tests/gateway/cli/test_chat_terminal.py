"""``clarigate chat`` on a pseudo-terminal, as a person types at it: the line is edited with the
arrow keys, and a paste of several lines is one message."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

CLARIGATE = Path(sys.executable).with_name("clarigate")  # the console script pip installed
PROMPT = b"you> "


class Typing:
    """``clarigate chat`` on the offline model, its input and output a pseudo-terminal."""

    def __init__(self, data_dir: Path) -> None:
        env = {**os.environ, "CLARIGATE_DATA_DIR": str(data_dir), "LLM_MODEL": "offline"}
        env.update(TERM="xterm", INPUTRC=os.devnull)  # readline's defaults on a common terminal
        for name in ("CHECKPOINTER_URL", "CLARIGATE_CONFIG", "LANGGRAPH_URL"):
            env.pop(name, None)
        self.keyboard, screen = pty.openpty()
        self.process = subprocess.Popen(
            [str(CLARIGATE), "chat"], stdin=screen, stdout=screen, stderr=screen, env=env
        )
        os.close(screen)
        self.shown = b""

    def until(self, prompts: int) -> str:
        """What the terminal shows once the prompt was shown ``prompts`` times."""
        deadline = time.monotonic() + 60  # a bound for a broken chat, not a timing assertion
        while self.shown.count(PROMPT) < prompts:
            assert time.monotonic() < deadline, f"no prompt; shown {self.shown!r}"
            if select.select([self.keyboard], [], [], 1)[0]:
                self.shown += os.read(self.keyboard, 65536)
        return self.shown.decode("utf-8", "replace").replace("\r\n", "\n")

    def type(self, keys: bytes) -> None:
        os.write(self.keyboard, keys)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        os.close(self.keyboard)


def test_the_arrow_keys_edit_the_line_and_a_paste_is_one_message(tmp_path: Path) -> None:
    chat = Typing(tmp_path)
    try:
        chat.until(1)
        chat.type(b"deploy the app\x1b[D\x1b[Dx\r")  # two steps left, then an x
        shown = chat.until(2)
        assert "bot> Here is how I would handle “deploy the axpp”" in shown
        assert "\x1b[D" not in shown and "^[[D" not in shown

        chat.type(b"\x1b[200~first line\nsecond line\x1b[201~\r")  # a paste (bracketed), then Enter
        shown = chat.until(3)
        assert "bot> Here is how I would handle “first line\nsecond line”" in shown
        assert "“second line”" not in shown  # not a second request
    finally:
        chat.close()
