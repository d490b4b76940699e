"""The checked-in generated protocol code is exactly what protos/generate.py writes from protos/."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def load_generator() -> object:
    spec = importlib.util.spec_from_file_location("protos_generate", ROOT / "protos" / "generate.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["protos_generate"] = module
    spec.loader.exec_module(module)
    return module


def test_generated_code_matches_protos(tmp_path: Path) -> None:
    generator = load_generator()
    generator.generate(tmp_path)  # type: ignore[attr-defined]
    # fiftysix/v1/ is all generated; the rest of fiftysix/ is the game, written by hand.
    fresh = {
        path.relative_to(tmp_path): path.read_bytes()
        for path in (tmp_path / "fiftysix" / "v1").rglob("*")
        if path.is_file()
    }
    checked_in = {
        path.relative_to(ROOT): path.read_bytes()
        for path in (ROOT / "fiftysix" / "v1").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert sorted(fresh) == sorted(checked_in), "generated files differ: run python protos/generate.py"
    stale = [str(name) for name, content in fresh.items() if checked_in[name] != content]
    if stale:
        pytest.fail(f"out of date with protos/: {stale}; run python protos/generate.py and commit the result")
