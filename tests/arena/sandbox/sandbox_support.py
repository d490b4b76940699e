"""What the sandbox's tests share: skip where bubblewrap cannot run, but fail under CI."""

from __future__ import annotations

import os
import tarfile
from pathlib import Path
from typing import Final

import pytest

from arena.sandbox import bubblewrap

ROOT: Final = Path(__file__).resolve().parents[3]


def require_bubblewrap() -> None:
    """Skip where the sandbox cannot run; fail under CI (CI set), which must install bubblewrap, so that
    CI never skips the sandbox's tests silently."""
    reason = bubblewrap.unavailable_reason()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"the sandbox cannot run: {reason}; CI must install bubblewrap")
        pytest.skip(f"the sandbox cannot run here: {reason}")


def random_bot_bundle(folder: Path) -> Path:
    """A bundle as an entrant makes it: the SDK, the game and a bot.py beside them."""
    archive = folder / "random.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for package in ("sdk", "fiftysix", "sample_bots"):
            tar.add(ROOT / package, package, filter=python_only)
        tar.add(ROOT / "sample_bots/random_bot.py", "bot.py")
    return archive


def python_only(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
    """Leave out what a Python bot does not need: caches, and the other samples (JavaScript's packages
    hold symbolic links, which a bundle may not)."""
    parts = info.name.split("/")
    other_samples = parts[:2] in (["sample_bots", "js"], ["sample_bots", "cpp"], ["sample_bots", "go"])
    return None if "__pycache__" in parts or other_samples else info
