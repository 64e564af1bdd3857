"""Every link in README.md, docs/*.md and the READMEs of benchmarks/ and roles/ resolves inside this repository,
and no doc names a file outside it.

A reader follows links on GitHub, where a relative link opens the file beside the doc and `#anchor` jumps to a
heading by GitHub's slug rules; a link that leaves the repository (`../shared/...`) or names a heading that was
renamed is a dead end there. Paths written as code (`docs/x.md`, `../reference/y.md`) are read the same way
when they name a Markdown file, so a doc cannot send readers to notes that ship only on the author's machine.
"""

from __future__ import annotations

import functools
import os
import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "benchmarks" / "README.md",
        *sorted((ROOT / "roles").glob("**/README.md"))]

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
LINK = re.compile(r"(?<!\!)\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
IMAGE = re.compile(r"!\[[^\]]*\]\(\s*<?([^)\s>]+)>?\s*\)")
HTML_HREF = re.compile(r"""<a\s[^>]*href=["']([^"']+)["']""", re.IGNORECASE)
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
MD_PATH = re.compile(r"^(?:\.{1,2}/|/)?[\w./-]*\.md(?:#[\w-]*)?$")
EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//)", re.IGNORECASE)


def prose_lines(text: str) -> list[tuple[int, str]]:
    """The doc's lines outside fenced code blocks, numbered from 1 (links in code samples are not links)."""
    lines: list[tuple[int, str]] = []
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), 1):
        match = FENCE.match(line)
        if match:
            fence = None if fence == match.group(1) else (fence or match.group(1))
            continue
        if fence is None:
            lines.append((number, line))
    return lines


def heading_text(markdown: str) -> str:
    """A heading as GitHub renders it to text: link text kept, emphasis and code markers dropped."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", markdown)
    text = re.sub(r"<[^>]+>", "", text)
    return text.replace("`", "").replace("*", "")


def slug(text: str) -> str:
    """GitHub's anchor for a heading: lower case, only letters, digits, `-`, `_` and spaces kept, spaces to `-`."""
    kept = "".join(ch for ch in heading_text(text).strip().lower()
                   if ch in " -_" or unicodedata.category(ch)[0] in "LN")
    return kept.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every anchor GitHub makes in a Markdown file; a repeated heading gets `-1`, `-2`, ... as GitHub numbers them."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for _, line in prose_lines(path.read_text(encoding="utf-8")):
        found.update(re.findall(r"""<a\s[^>]*(?:name|id)=["']([^"']+)["']""", line))
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def targets(doc: Path) -> list[tuple[int, str, bool]]:
    """(line, target, is_link) for each link and each code span that names a Markdown file."""
    found: list[tuple[int, str, bool]] = []
    for number, line in prose_lines(doc.read_text(encoding="utf-8")):
        for pattern in (LINK, IMAGE, HTML_HREF):
            found += [(number, target, True) for target in pattern.findall(line)]
        for _, span in CODE_SPAN.findall(line):
            if MD_PATH.match(span.strip()) and "/" in span:
                found.append((number, span.strip(), False))
    return found


def resolve(doc: Path, target: str, is_link: bool) -> str | None:
    """Why `target` in `doc` is broken, or None. Code spans may name a file from the doc or the repository root."""
    path_part, _, anchor = target.partition("#")
    bases = [doc.parent] if is_link else [doc.parent, ROOT]
    if path_part.startswith("/"):
        return f"{target}: an absolute path (write it relative to {doc.relative_to(ROOT)})"
    candidates = [(base / path_part).resolve() if path_part else doc for base in bases]
    inside = [c for c in candidates if c == ROOT or ROOT in c.parents]
    if not inside:
        return f"{target}: outside the repository"
    existing = [c for c in inside if c.exists()]
    if not existing:
        return f"{target}: no such file in the repository"
    if anchor and existing[0].suffix == ".md" and anchor not in anchors(existing[0]):
        return f"{target}: no heading in {existing[0].relative_to(ROOT)} has the anchor #{anchor}"
    return None


@functools.cache
def markdown_names() -> frozenset[str]:
    """The names of the Markdown files in the checkout (virtualenvs, caches and build output left out)."""
    names: set[str] = set()
    for _folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in {"node_modules", "out", "__pycache__"}]
        names.update(f for f in files if f.endswith(".md"))
    return frozenset(names)


def broken(doc: Path) -> list[str]:
    out = []
    for number, target, is_link in targets(doc):
        if EXTERNAL.match(target):
            continue
        problem = resolve(doc, target, is_link)
        if problem:
            out.append(f"{doc.relative_to(ROOT)}:{number}: {problem}")
    return out


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_links_and_anchors_resolve_inside_the_repository(doc: Path) -> None:
    assert broken(doc) == []


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_doc_names_a_file_outside_the_repository(doc: Path) -> None:
    """Notes beside the checkout (`../shared/...`, `/work/...`) are not part of what a reader has."""
    text = doc.read_text(encoding="utf-8")
    outside = [f"{doc.relative_to(ROOT)}:{n}: {m.group(0)}" for n, line in enumerate(text.splitlines(), 1)
               for m in re.finditer(r"(?:\.\./)+shared/[\w./-]+|/work/[\w./-]+", line)]
    assert outside == []


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_markdown_file_named_is_in_the_repository(doc: Path) -> None:
    """A doc that says "see `notes.md`" by its bare name names a file a reader of this repository can open."""
    shipped = markdown_names()
    named = [f"{doc.relative_to(ROOT)}:{n}: {m.group(1)}"
             for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1)
             for m in re.finditer(r"(?<![\w/.-])([\w.-]+\.md)\b", line) if m.group(1) not in shipped]
    assert named == []


@pytest.mark.parametrize(("heading", "anchor"), [
    ("Does the design fit? `clusterforge check`", "does-the-design-fit-clusterforge-check"),
    ("Threat model: blueprints are untrusted input", "threat-model-blueprints-are-untrusted-input"),
    ("slurmctld start at 12,500 nodes (`benchmarks/slurmctld_start.py`)",
     "slurmctld-start-at-12500-nodes-benchmarksslurmctld_startpy"),
    ("A/B feeds — the 80 % rule", "ab-feeds--the-80--rule"),
    ("[Linked](x.md) heading", "linked-heading"),
])
def test_slug_follows_github(heading: str, anchor: str) -> None:
    assert slug(heading) == anchor


def test_the_checker_finds_what_it_must(tmp_path: Path) -> None:
    """A dead anchor, a missing file and a path out of the repository are each reported; a good link is not."""
    doc = ROOT / "docs" / "lab.md"
    assert resolve(doc, "operations.md#no-such-heading", True) is not None
    assert resolve(doc, "no-such-file.md", True) is not None
    assert resolve(doc, "../../shared/reference/x.md", True) is not None
    assert resolve(doc, "operations.md#day-two", True) is None
    assert resolve(doc, "docs/operations.md", False) is None
