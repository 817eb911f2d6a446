"""Documents named in code and docs exist in the repository (no pointer to a file nobody has)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SOURCES = ("agent", "gateway", "adapters", "bench", "deploy", "tests")


def test_every_named_markdown_document_exists() -> None:
    present = {path.name for path in REPO.rglob("*.md") if ".venv" not in path.parts}
    dangling = []
    files = [
        REPO / "README.md",
        *(p for d in SOURCES for p in (REPO / d).rglob("*") if p.suffix in (".py", ".md")),
    ]
    for path in files:
        for name in set(re.findall(r"\b([A-Za-z_-]+\.md)\b", path.read_text(encoding="utf-8"))):
            if name not in present:
                dangling.append(f"{path.relative_to(REPO)}: {name}")
    assert dangling == []
