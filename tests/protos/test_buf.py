"""buf keeps the protocol files in shape: `buf lint` (the STANDARD rules) is clean, and `buf breaking`
finds no break against the baseline (protos/baseline/v1.binpb, the protocol as last released), and does
find one when a field is renumbered or deleted.

buf comes from npm: `(cd protos && npm ci)`. Without it the tests skip locally, and fail under CI (CI
set), so CI can never skip them silently.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROTOS = ROOT / "protos"
BASELINE = PROTOS / "baseline" / "v1.binpb"
BOT_PROTO = Path("fiftysix") / "v1" / "bot.proto"


@pytest.fixture(scope="module")
def buf() -> str:
    """The buf executable: protos/node_modules/.bin/buf, else buf on the PATH."""
    installed = PROTOS / "node_modules" / ".bin" / "buf"
    found = str(installed) if installed.exists() else shutil.which("buf")
    if found is None:
        reason = "buf is not installed: run `(cd protos && npm ci)`"
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; CI must install it before the tests")
        pytest.skip(reason)
    return found


def run(buf: str, where: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([buf, *args], cwd=where, capture_output=True, text=True, timeout=120, check=False)


def test_lint_is_clean(buf: str) -> None:
    finished = run(buf, PROTOS, "lint")
    assert finished.returncode == 0, finished.stdout + finished.stderr


def test_nothing_breaks_against_the_baseline(buf: str) -> None:
    finished = run(buf, PROTOS, "breaking", "--against", str(BASELINE))
    assert finished.returncode == 0, finished.stdout + finished.stderr


def _copy(tmp_path: Path, change: Callable[[str], str]) -> Path:
    """protos/ (its buf.yaml and .proto files) in `tmp_path`, with bot.proto passed through `change`."""
    copy = tmp_path / "protos"
    shutil.copytree(PROTOS, copy, ignore=shutil.ignore_patterns("node_modules", "baseline"))
    text = (copy / BOT_PROTO).read_text(encoding="utf-8")
    changed = change(text)
    assert changed != text, "the change must change something"
    (copy / BOT_PROTO).write_text(changed, encoding="utf-8")
    return copy


@pytest.mark.parametrize(
    ("change", "rule"),
    [
        (
            lambda text: text.replace("repeated string legal_moves = 3;", "repeated string legal_moves = 9;"),
            "FIELD_NO_DELETE",
        ),
        (lambda text: text.replace("  uint32 bank_ms = 5;\n", ""), "FIELD_NO_DELETE"),
        (lambda text: text.replace("uint64 decision_id = 1;", "uint32 decision_id = 1;"), "FIELD_SAME_TYPE"),
        (
            lambda text: text.replace("RULESET_PARTNERSHIP = 2;", "RULESET_PARTNERSHIP = 3;"),
            "ENUM_VALUE_NO_DELETE",
        ),
    ],
    ids=["renumbered field", "deleted field", "retyped field", "renumbered enum value"],
)
def test_breaking_finds_a_break(buf: str, tmp_path: Path, change: Callable[[str], str], rule: str) -> None:
    copy = _copy(tmp_path, change)
    finished = run(buf, copy, "breaking", "--against", str(BASELINE), "--error-format", "json")
    assert finished.returncode != 0
    found = [json.loads(line) for line in finished.stdout.splitlines() if line.strip()]
    assert rule in {problem["type"] for problem in found}, finished.stdout + finished.stderr
    assert all(problem["path"] == str(BOT_PROTO) for problem in found)


def test_lint_finds_a_stray_enum(buf: str, tmp_path: Path) -> None:
    copy = _copy(tmp_path, lambda text: text + "\n// A colour.\nenum Colour {\n  // Red.\n  RED = 0;\n}\n")
    finished = run(buf, copy, "lint", "--error-format", "json")
    assert finished.returncode != 0
    found = {json.loads(line)["type"] for line in finished.stdout.splitlines() if line.strip()}
    assert {"ENUM_ZERO_VALUE_SUFFIX", "ENUM_VALUE_PREFIX"} <= found
