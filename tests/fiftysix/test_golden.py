"""Golden transcripts: every case of tests/fiftysix/golden/regenerate.py, replayed in memory, must match
its file.

A failure shows the start of a unified diff. If the engine change is intended, regenerate the files
and review the diff as part of the change.
"""

from __future__ import annotations

import difflib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

GOLDEN_DIR = Path(__file__).resolve().parent / "golden"
DIFF_LINES = 60
HINT = (
    "If this change is intended, rewrite the golden files with `python -m tests.fiftysix.golden.regenerate` "
    "and review `git diff tests/fiftysix/golden` line by line before committing."
)


def _load_regenerate() -> ModuleType:
    # Loaded by path: `tests` is not an installed package, and how pytest puts it on sys.path depends
    # on the import mode and on whether tests/ ever gets an __init__.py.
    name = "tests_golden_regenerate"
    spec = importlib.util.spec_from_file_location(name, GOLDEN_DIR / "regenerate.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is created
    spec.loader.exec_module(module)
    return module


regenerate = _load_regenerate()


@pytest.mark.parametrize("case", regenerate.CASES, ids=lambda case: case.name)
def test_transcript_matches_golden_file(case: Any) -> None:
    path: Path = case.path
    if not path.exists():
        pytest.fail(f"{path.name} is missing. {HINT}", pytrace=False)
    expected = path.read_text(encoding="utf-8")
    actual: str = case.render()
    if actual == expected:
        return
    diff = list(
        difflib.unified_diff(
            expected.splitlines(),
            actual.splitlines(),
            fromfile=f"tests/fiftysix/golden/{path.name}",
            tofile="regenerated",
            lineterm="",
        )
    )
    shown = "\n".join(diff[:DIFF_LINES])
    more = f"\n... {len(diff) - DIFF_LINES} more diff lines" if len(diff) > DIFF_LINES else ""
    pytest.fail(f"{path.name} differs from the engine's transcript:\n{shown}{more}\n\n{HINT}", pytrace=False)


def test_every_golden_file_has_a_case() -> None:
    known = {case.path.name for case in regenerate.CASES}
    stray = sorted(path.name for path in GOLDEN_DIR.glob("*.txt") if path.name not in known)
    assert not stray, f"golden files that no case writes (delete them or add a case): {stray}"


def test_transcripts_are_deterministic() -> None:
    case = regenerate.CASES[0]
    assert case.render() == case.render()
