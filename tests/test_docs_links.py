"""The repository's documentation stands on its own: every relative link in a Markdown file leads to a
file inside the repository (and to a heading there, when it names an anchor), every mention of a
section of the rules in code (`docs/rules.md#the-auction`) names one of its headings, and nothing refers
to a file outside the repository, which users do not get.

Anchors are GitHub's: a heading's text in lower case, punctuation dropped, spaces turned to hyphens,
and `-1`, `-2`, ... added to repeats.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Final
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parent.parent

SKIPPED_FOLDERS = {
    ".git",
    "node_modules",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".hypothesis",
    "build",
    "dist",
}
"""Folders that are not the repository's own text: version control, installed packages, caches."""

OUTSIDE = ("../" + "shared", "RULES" + ".md")
"""What the project once linked outside the repository (written in two parts so that this file does
not mention them itself)."""

FENCE = re.compile(r"\s*(```|~~~)")
HEADING = re.compile(r"(#{1,6})\s+(.*?)\s*#*\s*$")
CODE_SPAN = re.compile(r"`[^`]*`")
INLINE_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"\s*\[[^\]]+\]:\s*<?([^\s>]+)>?")
EXTERNAL = re.compile(r"([a-zA-Z][a-zA-Z0-9+.-]*:|//)")
RULES_ANCHOR = re.compile(r"docs/rules\.md#([A-Za-z0-9_-]*)")


def repository_files(root: Path) -> Iterator[Path]:
    """Every file of the repository, without the skipped folders (and installed package metadata)."""
    for folder, folders, files in os.walk(root):
        folders[:] = sorted(
            name for name in folders if name not in SKIPPED_FOLDERS and not name.endswith(".egg-info")
        )
        for name in sorted(files):
            yield Path(folder) / name


def text_of(path: Path) -> str | None:
    """The file's text, or None for a file that is not UTF-8 text."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return None


def prose_lines(text: str) -> Iterator[tuple[int, str]]:
    """The numbered lines of a Markdown text outside fenced code blocks."""
    fenced = False
    for number, line in enumerate(text.splitlines(), start=1):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            yield number, line


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors of every heading of a Markdown file."""
    seen: dict[str, int] = {}
    found = set()
    for _, line in prose_lines(path.read_text(encoding="utf-8")):
        heading = HEADING.fullmatch(line)
        if heading:
            base = slug(heading.group(2))
            repeats = seen.get(base, 0)
            seen[base] = repeats + 1
            found.add(base if repeats == 0 else f"{base}-{repeats}")
    return found


def links(text: str) -> Iterator[tuple[int, str]]:
    """Every link target of a Markdown text, with its line, outside code blocks and code spans."""
    for number, line in prose_lines(text):
        bare = CODE_SPAN.sub("code", line)
        for link in INLINE_LINK.finditer(bare):
            yield number, link.group(1)
        reference = REFERENCE_LINK.match(bare)
        if reference:
            yield number, reference.group(1)


def broken_links(root: Path) -> list[str]:
    """Every relative link of the Markdown files under `root` that leads nowhere inside `root`."""
    root = root.resolve()
    problems = []
    for path in repository_files(root):
        if path.suffix != ".md":
            continue
        where = path.relative_to(root)
        for number, target in links(path.read_text(encoding="utf-8")):
            if not target or EXTERNAL.match(target):
                continue
            file_part, _, anchor = target.partition("#")
            linked = (path.parent / unquote(file_part)).resolve() if file_part else path
            if not linked.is_relative_to(root):
                problems.append(f"{where}:{number}: {target} is outside the repository")
            elif not linked.exists():
                problems.append(f"{where}:{number}: {target} does not exist")
            elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
                problems.append(f"{where}:{number}: {target}: no heading with the anchor #{anchor}")
    return problems


def test_every_relative_link_in_the_documentation_leads_somewhere() -> None:
    assert broken_links(ROOT) == []


def test_the_link_check_finds_broken_links(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text("# Guide\n\n## The `pairs` ruleset\n\n## Notes\n\n## Notes\n")
    (tmp_path / "README.md").write_text(
        "\n".join(
            [
                "[fine](docs/guide.md#the-pairs-ruleset) [fine](docs/guide.md#notes-1) [fine](#readme)",
                "[fine](https://example.com/missing.md) `[ignored](missing.md)` [fine](docs/)",
                "# Readme",
                "[missing file](docs/missing.md)",
                "[missing anchor](docs/guide.md#notes-2)",
                "[outside](../elsewhere/README.md)",
                "```",
                "[ignored](in/a/code/block.md)",
                "```",
                "[missing here](#nowhere)",
                "[reference]: docs/gone.md",
            ]
        )
    )
    assert broken_links(tmp_path) == [
        "README.md:4: docs/missing.md does not exist",
        "README.md:5: docs/guide.md#notes-2: no heading with the anchor #notes-2",
        "README.md:6: ../elsewhere/README.md is outside the repository",
        "README.md:10: #nowhere: no heading with the anchor #nowhere",
        "README.md:11: docs/gone.md does not exist",
    ]


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("The auction", "the-auction"),
        ("3. Notation", "3-notation"),
        ("Players, seats and teams", "players-seats-and-teams"),
        ("The `partnership` ruleset", "the-partnership-ruleset"),
        ("Time and faults (see [the guide](docs/bot-guide.md))", "time-and-faults-see-the-guide"),
        ("a_b - c", "a_b---c"),
    ],
)
def test_anchors_are_githubs(heading: str, anchor: str) -> None:
    assert slug(heading) == anchor


def test_every_mention_of_a_rules_section_names_a_heading() -> None:
    sections = anchors(ROOT / "docs" / "rules.md")
    mentions = []
    for path in repository_files(ROOT):
        for number, line in enumerate((text_of(path) or "").splitlines(), start=1):
            mentions += [
                (f"{path.relative_to(ROOT)}:{number}", anchor) for anchor in RULES_ANCHOR.findall(line)
            ]
    assert len(mentions) > 10
    assert [f"{where}: no section #{anchor}" for where, anchor in mentions if anchor not in sections] == []


def test_nothing_refers_to_a_file_outside_the_repository() -> None:
    found = []
    for path in repository_files(ROOT):
        for number, line in enumerate((text_of(path) or "").splitlines(), start=1):
            found += [
                f"{path.relative_to(ROOT)}:{number}: {outside}" for outside in OUTSIDE if outside in line
            ]
    assert found == []


PROJECT_PATH = re.compile(
    r"`((?:arena|fiftysix|sdk|sample_bots|bench|tests|protos|docs)/[A-Za-z0-9_./{},-]*?)(?::\d+)?`"
)
"""A repository path quoted as code in the documentation: `arena/ladder/store/file.py`, a folder
(`arena/ladder/bots/`) or several in braces (`tests/arena/{runner,ladder}/`)."""


NOT_PATHS: Final = {"fiftysix/first-dealer", "fiftysix/bot"}
"""Quoted text that looks like a path and is not one: the label the first dealer's HMAC is keyed by, and
the Go kit's import path (its folder is sample_bots/go/src/fiftysix/bot/)."""


def expanded(path: str) -> list[str]:
    """A quoted path with its braces spelled out, one path per choice."""
    braces = re.search(r"\{([^{}]*)\}", path)
    if braces is None:
        return [path]
    head, tail = path[: braces.start()], path[braces.end() :]
    return [spelled for choice in braces.group(1).split(",") for spelled in expanded(head + choice + tail)]


def quoted_paths_that_are_missing(root: Path) -> list[str]:
    missing = []
    for path in repository_files(root):
        if path.suffix != ".md":
            continue
        for number, line in prose_lines(text_of(path) or ""):
            for quoted in PROJECT_PATH.findall(line):
                if "*" in quoted or "..." in quoted or quoted in NOT_PATHS:
                    continue
                bases = (root, path.parent, root / "protos")  # protos/ quotes its own paths
                missing += [
                    f"{path.relative_to(root)}:{number}: {spelled}"
                    for spelled in expanded(quoted)
                    if not any((base / spelled.rstrip("/")).exists() for base in bases)
                ]
    return missing


def test_every_path_the_documentation_quotes_is_there() -> None:
    """A module moved (arena/ladder's store, bots and rating) leaves no old path in the README's
    layout or in docs/."""
    assert quoted_paths_that_are_missing(ROOT) == []


def test_the_path_check_finds_a_moved_module(tmp_path: Path) -> None:
    (tmp_path / "arena" / "ladder" / "store").mkdir(parents=True)
    (tmp_path / "arena" / "ladder" / "store" / "file.py").write_text("")
    (tmp_path / "README.md").write_text(
        "`arena/ladder/store/file.py` and `arena/ladder/{store,bots}/` and `arena/ladder/store_file.py`\n"
    )
    assert quoted_paths_that_are_missing(tmp_path) == [
        "README.md:1: arena/ladder/bots/",
        "README.md:1: arena/ladder/store_file.py",
    ]


@pytest.mark.parametrize(
    "folder",
    ["arena/ladder", "arena/ladder/store", "arena/ladder/bots", "arena/ladder/rating", "arena/runner"],
)
def test_the_layout_table_names_every_module_of_the_host_s_layered_folders(folder: str) -> None:
    """The README's layout row of each of these folders names each of its modules, so a module moved
    or added shows in the table a newcomer reads first."""
    rows = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    row = next(line for line in rows if line.startswith(f"| `{folder}/` |"))
    named = set(re.findall(r"`([a-z_]+\.py)`", row))
    modules = {path.name for path in (ROOT / folder).glob("*.py")} - {"__init__.py"}
    assert sorted(modules - named) == []
