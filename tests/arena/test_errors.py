"""The arena's one error family: every user-facing error is an ArenaError with the right exit status."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import arena.errors
from arena.check.checker import BotUnreachableError
from arena.errors import ArenaError, UsageError
from arena.ladder import LadderError
from arena.ladder.bots import BotStartError
from arena.ladder.store import DuplicateMatchError, StoreError


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (ArenaError, 1),
        (UsageError, 2),
        (StoreError, 1),
        (DuplicateMatchError, 1),
        (LadderError, 1),
        (BotStartError, 1),
        (BotUnreachableError, 1),
    ],
)
def test_every_user_facing_error_is_an_arena_error_with_its_status(
    error: type[ArenaError], status: int
) -> None:
    assert issubclass(error, ArenaError)
    assert error.exit_status == status


@pytest.mark.parametrize(
    ("error", "base"),
    [
        (StoreError, ValueError),
        (LadderError, ValueError),
        (BotStartError, RuntimeError),
        (BotUnreachableError, RuntimeError),
    ],
)
def test_the_errors_keep_their_older_base(error: type[ArenaError], base: type[Exception]) -> None:
    """Callers that caught them as ValueError or RuntimeError still do."""
    assert issubclass(error, base)


def test_the_error_module_imports_nothing_of_the_project() -> None:
    tree = ast.parse(Path(arena.errors.__file__).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert node.module in ("__future__", "typing"), node.module
        assert not isinstance(node, ast.Import)
