"""What the sandbox's tests share: skip where bubblewrap cannot run, but fail under CI."""

from __future__ import annotations

import os

import pytest

from arena.sandbox import bubblewrap


def require_bubblewrap() -> None:
    """Skip where the sandbox cannot run; fail under CI (CI set), which must install bubblewrap, so that
    CI never skips the sandbox's tests silently."""
    reason = bubblewrap.unavailable_reason()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"the sandbox cannot run: {reason}; CI must install bubblewrap")
        pytest.skip(f"the sandbox cannot run here: {reason}")
