"""A package face whose names load when first used (PEP 562): the ladder's face and the bots' face
name what they export without importing the modules behind them, so that importing a light part (the
store, a command's launch) does not load the run or the process pool. Type checkers read the names
from the face's `if TYPE_CHECKING:` imports."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def lazy_names(package: str, homes: Mapping[str, str]) -> Callable[[str], object]:
    """The module `__getattr__` of `package`: each name of `homes` is imported from its home module (a
    module of the package, by its last name) when first asked for; any other name is an AttributeError,
    as from any module."""

    def attribute(name: str) -> object:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{home}"), name)

    return attribute
