"""The rating math's examples in its docstrings (doctests) hold: they show what each function gives on
a small case, and the docs would lie if they drifted."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import arena.ladder.rating

MODULES = [
    f"arena.ladder.rating.{module.name}" for module in pkgutil.iter_modules(arena.ladder.rating.__path__)
]


@pytest.mark.parametrize("name", MODULES)
def test_the_examples_in_the_rating_docstrings_hold(name: str) -> None:
    results = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert results.failed == 0


def test_the_rating_math_shows_examples() -> None:
    """The sequential test, the tallies and the fit each carry examples."""
    counted = {
        name: doctest.testmod(importlib.import_module(name)).attempted
        for name in ("arena.ladder.rating.sprt", "arena.ladder.rating.tally", "arena.ladder.rating.fit")
    }
    assert all(attempted >= 3 for attempted in counted.values()), counted
