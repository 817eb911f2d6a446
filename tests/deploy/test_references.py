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
        # a name, not an attribute or an argument (markdown-it's ``state.md.helpers``, ``state.md,``)
        for name in set(re.findall(r"\b([A-Za-z_-]+\.md)\b(?![.(,])", path.read_text(encoding="utf-8"))):
            if name not in present:
                dangling.append(f"{path.relative_to(REPO)}: {name}")
    assert dangling == []


def test_the_readme_contents_list_every_section_in_order() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    body = text.split("## Contents", 1)[1].split("\n## ", 1)[1]  # what follows the contents
    headings = re.findall(r"^(##|###) (.+)$", "## " + body, re.MULTILINE)
    listed = re.findall(r"^( *)- \[(.+?)\]\(#([\w-]+)\)$", text.split("## Contents", 1)[1], re.MULTILINE)

    def anchor(heading: str) -> str:  # GitHub's rule: lower case, punctuation out, spaces to dashes
        return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")

    assert [(len(level) - 2, title, anchor(title)) for level, title in headings] == [
        (len(indent) // 2, title, target) for indent, title, target in listed
    ]
