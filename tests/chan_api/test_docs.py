"""The docs are guides a reader can follow: no file past 1,000 lines, no issue numbers and no
links outside the repository, every relative link (and its anchor) resolving, and the runbook's
table of contents reaching the sections an operator looks for."""

import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def _prose(path: Path) -> list[str]:
    """The file's lines outside fenced code blocks (a code block's text is not a link)."""
    lines, fenced = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line.strip()):
            fenced = not fenced
            continue
        lines.append("" if fenced else line)
    return lines


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces to -."""
    text = re.sub(r"`([^`]*)`", r"\1", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = text.strip().lower()
    kept = []
    for ch in text:
        if ch in " -_" or unicodedata.category(ch)[0] in "LNM":
            kept.append("-" if ch == " " else ch)
    return "".join(kept)


def _anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    anchors = set()
    for line in _prose(path):
        match = HEADING.match(line)
        if not match:
            continue
        slug = _slug(match.group(2))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def _links(path: Path) -> list[str]:
    return [m.group(1) for line in _prose(path) for m in LINK.finditer(line)]


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("path", DOCS, ids=_rel)
def test_no_doc_is_past_a_thousand_lines(path):
    assert len(path.read_text(encoding="utf-8").splitlines()) <= 1000


@pytest.mark.parametrize("path", DOCS, ids=_rel)
def test_docs_cite_no_issue_numbers_and_nothing_outside_the_repository(path):
    text = path.read_text(encoding="utf-8")
    assert not re.findall(r"\bissues?\s+#?\d+", text, flags=re.IGNORECASE)
    assert "../shared" not in text
    # The rules are docs/rules.md in this repository: cited by link, not as "RULES.md §".
    assert "RULES.md" not in text


@pytest.mark.parametrize("path", DOCS, ids=_rel)
def test_every_relative_link_resolves_to_a_file_and_its_anchor(path):
    broken = []
    for target in _links(path):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, flags=re.IGNORECASE):
            continue  # http:, https:, mailto:
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.exists():
            broken.append(target)
            continue
        if anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(target)
    assert not broken, f"{_rel(path)}: {broken}"


def test_the_runbook_opens_with_contents_that_reach_what_an_operator_looks_for():
    runbook = ROOT / "docs" / "operations.md"
    lines = _prose(runbook)
    sections = [i for i, line in enumerate(lines) if line.startswith("## ")]
    assert sections and lines[sections[0]].lower().startswith("## contents"), (
        "docs/operations.md opens with no table of contents"
    )
    end = sections[1] if len(sections) > 1 else len(lines)
    contents = [t for line in lines[sections[0] : end] for t in LINK.findall(line)]
    anchors = _anchors(runbook)
    local = [t[1:] for t in contents if t.startswith("#")]
    assert local and not [a for a in local if a not in anchors]
    reached = " ".join(contents).lower()
    for subject in ("install", "health", "metrics", "logs", "back", "upgrade", "troubleshoot"):
        assert subject in reached, subject


def test_every_setting_read_from_the_environment_is_documented():
    settings = (ROOT / "chan_api" / "settings.py").read_text(encoding="utf-8")
    names = set(
        re.findall(
            r"""(?:environ\.get|environ\[|env_bool|env_list)\(?\s*["']([A-Z][A-Z0-9_]+)["']""",
            settings,
        )
    )
    names -= {"PYTEST_VERSION", "PYTEST_XDIST_WORKER"}  # set by pytest, not by an operator
    assert "MAX_BODY_BYTES" in names and "DATABASE_URL" in names  # the pattern finds them
    documented = (ROOT / "README.md").read_text(encoding="utf-8")
    documented += (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    assert sorted(n for n in names if f"`{n}`" not in documented) == []


CODE_DIRS = ("accounts", "bench", "chan_api", "clients", "core", "deploy", "games", "play", "tests")
CODE_SUFFIXES = {".py", ".ts", ".mjs", ".js", ".html", ".css", ".json", ".toml", ".yaml", ".yml"}
SKIPPED_PARTS = {"node_modules", "dist", "__pycache__", ".venv"}


def _code_files():
    for name in ("Makefile", "pyproject.toml", "Procfile", ".ci/run"):
        yield ROOT / name
    for top in CODE_DIRS:
        for path in sorted((ROOT / top).rglob("*")):
            if (
                path.is_file()
                and path.suffix in CODE_SUFFIXES
                and not SKIPPED_PARTS.intersection(path.parts)
            ):
                yield path


def test_code_cites_no_issue_numbers():
    """Comments, docstrings and help texts say what a thing is and why, never which issue
    brought it (the tracker is not part of a clone)."""
    pattern = re.compile(r"\bissues?\s+#?\d+", flags=re.IGNORECASE)
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in _code_files()
        if path.resolve() != Path(__file__).resolve()
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
        if pattern.search(line)
    ]
    assert found == []
