"""The layers import downward only, in three rules:

1. `fiftysix` (the game) imports neither `sdk` nor `arena`; its engine imports the standard library
   alone; only the wire (`fiftysix.wire`, `fiftysix.v1`) needs protobuf, and nothing of it needs gRPC
   except the generated stubs; only the research environment (`fiftysix.env`) needs numpy and
   PettingZoo.
2. `sdk` (the bot side) imports `fiftysix` only from the project (and gRPC, structlog...).
3. Only `arena`, `tests` and `bench` import `arena`: never the game, the SDK or the sample bots.

Inside the ladder (`arena/ladder/`, the run) three sub-packages stand below it: `rating` (pure math)
imports nothing of the host; the `store` imports neither the run nor the bots, and of the rating package
only the values it keeps (the ladder computes, the store persists; only the upgrades of older files
recount their history); the `bots` import nothing of the run; and importing the store loads neither
the run nor the bots' pool (nor the compliance checker: the store keeps only its reports).
"""

from __future__ import annotations

import ast
import importlib
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


LADDER = ROOT / "arena" / "ladder"
RUN = {path.stem for path in LADDER.glob("*.py")} - {"__init__"}


def ladder_imports(package: str) -> list[tuple[Path, str]]:
    """What the modules of one of the ladder's sub-packages import of the host, in every form
    (`from arena.ladder import scheduler` names the run as surely as `import arena.ladder.scheduler`)."""
    found: list[tuple[Path, str]] = []
    for path in files_under(f"arena/ladder/{package}"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found += [(path, alias.name) for alias in node.names if alias.name.startswith("arena")]
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("arena"):
                assert node.module is not None
                found.append((path, node.module))
                found += [(path, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def is_run(name: str) -> bool:
    """Whether a dotted name is the ladder's run: its face or one of its own modules."""
    parts = name.split(".")
    return parts[:2] == ["arena", "ladder"] and (len(parts) == 2 or parts[2] in RUN)


def test_the_rating_math_imports_nothing_of_the_host() -> None:
    for path, name in ladder_imports("rating"):
        assert name.startswith("arena.ladder.rating"), f"{path.relative_to(ROOT)} imports {name}"


@pytest.mark.parametrize("package", ["store", "bots"])
def test_the_store_and_the_bots_stand_below_the_run(package: str) -> None:
    for path, name in ladder_imports(package):
        assert not is_run(name) or name == "arena.ladder", f"{path.relative_to(ROOT)} imports {name}"
        if package == "store":
            assert not name.startswith("arena.ladder.bots"), f"{path.relative_to(ROOT)} imports {name}"


def test_the_store_keeps_what_the_rating_package_computed() -> None:
    """Of the rating package the store names only its values: what a match adds to the totals and a set
    to the sums is computed above the store (arena/ladder/ratings.py). The one exception is the upgrade
    of an older file, which recomputes its history's totals and fit once (store/upgrades.py)."""
    recounting = ("arena.ladder.rating.tally", "arena.ladder.rating.fit")
    for path, name in ladder_imports("store"):
        if name.startswith("arena.ladder.rating"):
            allowed = ("arena.ladder.rating.values", *(recounting if path.name == "upgrades.py" else ()))
            assert name.startswith(allowed), f"{path.relative_to(ROOT)} imports {name}"


def test_the_run_and_nothing_else_lives_beside_the_sub_packages() -> None:
    """The ladder's folder holds its face, the run's modules and the three sub-packages: a new
    persisting, bot-starting or rating module goes in its sub-package."""
    folders = {path.name for path in LADDER.iterdir() if path.is_dir() and path.name != "__pycache__"}
    assert folders == {"store", "bots", "rating"}
    for module in RUN:
        assert not module.startswith(("store", "local_bots", "bot_commands", "supervisor")), module


def test_reading_the_store_loads_neither_the_run_nor_the_bots() -> None:
    """The face of the ladder loads its names when first used: importing the store (as the read-only
    site does) brings no scheduler and no process pool, and of the compliance check only its report."""
    code = (
        "import sys, arena.ladder.store, arena.ladder.rating\n"
        "ours = ('arena.ladder.', 'arena.check.')\n"
        "loaded = sorted(name for name in sys.modules if name.startswith(ours))\n"
        "print(' '.join(loaded))\n"
    )
    finished = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    loaded = finished.stdout.split()
    assert "arena.ladder.store.ladder_store" in loaded
    assert not [name for name in loaded if is_run(name) or name.startswith("arena.ladder.bots")], loaded
    assert [name for name in loaded if name.startswith("arena.check.")] == ["arena.check.report"], loaded


def test_the_site_loads_the_bot_processes_only_to_check_an_upload() -> None:
    """The site's pages read the store and nothing starts a bot; its management starts one only to check
    a registration, and loads the pool of processes then, not when the site is imported."""
    code = (
        "import sys, arena.site.app\n"
        "print(' '.join(sorted(name for name in sys.modules if name.startswith('arena.ladder.bots'))))\n"
    )
    finished = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert "arena.ladder.bots.pool" not in finished.stdout.split(), finished.stdout


@pytest.mark.parametrize("package", ["arena.ladder", "arena.ladder.bots", "arena.check"])
def test_a_lazy_face_names_what_it_loads(package: str) -> None:
    """Every name a face that loads when first used promises is there when asked for, and a wrong name
    is an AttributeError, as from any module."""
    face = importlib.import_module(package)
    for name in face.__all__:
        assert getattr(face, name) is not None, name
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = face.no_such_name
