"""The layers import downward only: engine <- protocol <- arena service / SDK <- command line.

The engine uses the standard library alone; the SDK and the sample bots never reach into the arena's
service, storage or command line.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def imports_of(path: Path) -> set[str]:
    """Every module a file imports, by full dotted name."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def files_under(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


def test_engine_uses_the_standard_library_only() -> None:
    for path in files_under("arena/engine"):
        for name in imports_of(path):
            top = name.split(".")[0]
            allowed = top in sys.stdlib_module_names or name.startswith("arena.engine") or top == "__future__"
            assert allowed, f"{path.relative_to(ROOT)} imports {name}: the engine is standard library only"


# What each layer may import from the project (besides the standard library and third-party packages).
SDK_ALLOWED = ("arena.engine", "arena.protocol", "arena.logs", "fiftysix", "sdk")
PROTOCOL_ALLOWED = ("arena.engine", "fiftysix")


@pytest.mark.parametrize("folder", ["sdk", "sample_bots"])
def test_sdk_and_bots_never_import_the_arena_service(folder: str) -> None:
    for path in files_under(folder):
        for name in imports_of(path):
            if name.split(".")[0] in ("arena", "fiftysix", "sdk", "sample_bots"):
                ok = name.startswith((*SDK_ALLOWED, "sample_bots"))
                assert ok, (
                    f"{path.relative_to(ROOT)} imports {name}: bots depend on the SDK and protocol only"
                )


def test_protocol_module_sits_on_the_engine_only() -> None:
    for name in imports_of(ROOT / "arena" / "protocol.py"):
        if name.split(".")[0] in ("arena", "fiftysix", "sdk"):
            assert name.startswith(PROTOCOL_ALLOWED), f"arena/protocol.py imports {name}"
