"""The layers import downward only, in three rules:

1. `fiftysix` (the game) imports neither `sdk` nor `arena`; its engine imports the standard library
   alone; only the wire (`fiftysix.wire`, `fiftysix.v1`) needs protobuf, and nothing of it needs gRPC
   except the generated stubs; only the research environment (`fiftysix.env`) needs numpy and
   PettingZoo.
2. `sdk` (the bot side) imports `fiftysix` only from the project (and gRPC, structlog...).
3. Only `arena`, `tests` and `bench` import `arena`: never the game, the SDK or the sample bots.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROJECT = ("fiftysix", "sdk", "arena", "sample_bots")


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
    return sorted(path for path in (ROOT / folder).rglob("*.py") if "node_modules" not in path.parts)


def project_imports(folder: str) -> list[tuple[Path, str]]:
    return [
        (path, name)
        for path in files_under(folder)
        for name in imports_of(path)
        if name.split(".")[0] in PROJECT
    ]


def test_the_game_imports_neither_the_sdk_nor_the_host() -> None:
    for path, name in project_imports("fiftysix"):
        assert name.split(".")[0] == "fiftysix", f"{path.relative_to(ROOT)} imports {name}"


def test_the_engine_uses_the_standard_library_only() -> None:
    for path in files_under("fiftysix/engine"):
        for name in imports_of(path):
            top = name.split(".")[0]
            allowed = (
                top in sys.stdlib_module_names or name.startswith("fiftysix.engine") or top == "__future__"
            )
            assert allowed, f"{path.relative_to(ROOT)} imports {name}: the engine is standard library only"


def test_the_game_works_without_grpc() -> None:
    code = (
        "import sys; sys.modules['grpc'] = None\n"
        "import fiftysix.engine, fiftysix.record, fiftysix.replay, fiftysix.transcript, fiftysix.pretty\n"
        "import fiftysix.players, fiftysix.wire\n"
    )
    finished = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert finished.returncode == 0, finished.stderr


def test_only_the_research_environment_needs_numpy_and_pettingzoo() -> None:
    """PettingZoo and Gymnasium (the `research` extra) only in fiftysix/env; numpy there too, and in the
    host's statistics (arena: the ratings' fit, the SPRT), never in the game or on the bot side."""
    research = ("pettingzoo", "gymnasium")
    for folder in PROJECT:
        for path in files_under(folder):
            if path.is_relative_to(ROOT / "fiftysix" / "env"):
                continue
            host = path.is_relative_to(ROOT / "arena") or path.is_relative_to(ROOT / "bench")
            for name in imports_of(path):
                top = name.split(".")[0]
                assert top not in research, f"{path.relative_to(ROOT)} imports {name}"
                assert host or top != "numpy", f"{path.relative_to(ROOT)} imports numpy"


@pytest.mark.parametrize("folder", ["sdk", "sample_bots"])
def test_the_bot_side_imports_the_game_only(folder: str) -> None:
    allowed = ("fiftysix", "sdk", "sample_bots") if folder == "sample_bots" else ("fiftysix", "sdk")
    for path, name in project_imports(folder):
        assert name.split(".")[0] in allowed, f"{path.relative_to(ROOT)} imports {name}"


@pytest.mark.parametrize("folder", ["fiftysix", "sdk", "sample_bots", "protos"])
def test_only_the_host_its_tests_and_benchmarks_import_the_host(folder: str) -> None:
    for path, name in project_imports(folder):
        assert name.split(".")[0] != "arena", f"{path.relative_to(ROOT)} imports {name}"


def test_the_engine_has_no_import_cycle() -> None:
    """Not even one hidden behind TYPE_CHECKING or inside a function: each module stands on those below."""
    graph = {
        path.stem: {
            name.rsplit(".", 1)[-1] for name in imports_of(path) if name.startswith("fiftysix.engine.")
        }
        for path in files_under("fiftysix/engine")
        if path.stem != "__init__"
    }
    done: set[str] = set()

    def visit(module: str, trail: tuple[str, ...]) -> None:
        assert module not in trail, f"import cycle: {' -> '.join((*trail, module))}"
        if module in done:
            return
        for imported in graph.get(module, ()):
            visit(imported, (*trail, module))
        done.add(module)

    for module in graph:
        visit(module, ())


def test_the_trusted_fast_path_is_out_of_the_hosts_reach() -> None:
    """`Deal.apply_trusted` skips the checks of a move: only search code (bots, benchmarks) may call it,
    never the arena, the wire or the SDK, which take moves from bots and must always validate them."""
    guarded = [*files_under("arena"), *files_under("sdk"), *files_under("fiftysix")]
    for path in guarded:
        if path.is_relative_to(ROOT / "fiftysix" / "engine"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
        names |= {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
        assert "apply_trusted" not in names, f"{path.relative_to(ROOT)} uses the unchecked Deal.apply_trusted"
