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


#: A section cited by name: ``deploy/README.md, "Metrics"``, ``README's "Adding a platform"``, or
#: unquoted up to the end of the string or parenthesis (``deploy/README.md, Delivery semantics``).
CITATION = re.compile(r"\b((?:deploy/)?README)(?:\.md)?(?:'s)?,? (?:\"([^\"\n]+)\"|([A-Z][\w ]*?)(?=[)\"']))")


def sections(document: Path) -> set[str]:
    """The sections of a markdown document a reader can find by name: its headings (without a
    trailing ``(`…`)``) and the bold leads of its paragraphs (``**Redis settings delivery needs.**``)."""
    text = document.read_text(encoding="utf-8")
    headings = re.findall(r"^#+ (.+?)(?: \(`[^`]*`\))?$", text, re.MULTILINE)
    leads = re.findall(r"^\*\*(.+?)\.?\*\*", text, re.MULTILINE)
    return {name.strip() for name in [*headings, *leads]}


def cited_sections(text: str) -> list[tuple[str, str]]:
    """(document, section) for every section ``text`` cites by name."""
    return [(f"{doc}.md", quoted or bare) for doc, quoted, bare in CITATION.findall(text)]


def test_every_section_the_code_cites_exists() -> None:
    """The words an operator reads (a log line's "(deploy/README.md, "…")", a docstring) send them
    to a section they can find."""
    known = {doc: sections(REPO / doc) for doc in ("README.md", "deploy/README.md")}
    missing = []
    for path in (p for d in ("agent", "gateway", "adapters") for p in (REPO / d).rglob("*.py")):
        for doc, section in cited_sections(path.read_text(encoding="utf-8")):
            if section not in known[doc]:
                missing.append(f"{path.relative_to(REPO)}: {doc}, {section!r}")
    assert missing == []


def test_the_citation_check_finds_both_ways_of_citing() -> None:
    cited = cited_sections('DOC = "deploy/README.md, Delivery semantics"\n(README\'s "Adding a platform")')
    assert cited == [("deploy/README.md", "Delivery semantics"), ("README.md", "Adding a platform")]
    assert "Redis settings delivery needs" in sections(REPO / "deploy/README.md")
    assert "Delivery semantics" not in sections(REPO / "deploy/README.md")


def relative_links(document: Path) -> list[str]:
    """The targets of a markdown document's links and images that are paths in the repository
    (not URLs, not anchors in the document itself), as CommonMark reads them (code left out)."""
    from markdown_it import MarkdownIt

    targets = []
    for token in MarkdownIt("commonmark").parse(document.read_text(encoding="utf-8")):
        for child in token.children or ():
            target = str(child.attrs.get("href") or child.attrs.get("src") or "")
            if target and not target.startswith("#") and not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", target):
                targets.append(target)
    return targets


def test_every_relative_link_of_the_documents_leads_to_a_file() -> None:
    """A link is read from its document's folder: ``deploy/README.md`` reaches bench/ as ``../bench``."""
    documents = [
        REPO / "README.md",
        REPO / "CHANGELOG.md",
        REPO / "deploy/README.md",
        REPO / "bench/README.md",
    ]
    broken = [
        f"{document.relative_to(REPO)}: {target}"
        for document in documents
        for target in relative_links(document)
        if not (document.parent / target.split("#", 1)[0]).exists()
    ]
    assert broken == []
