"""Test set-up shared by every folder: the deliberately bad bots in tests/bots are importable by name,
structlog's defaults are put back after every test, and hypothesis sets no deadline."""

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog
from hypothesis import settings

BOTS = Path(__file__).resolve().parent / "bots"
if str(BOTS) not in sys.path:
    sys.path.insert(0, str(BOTS))

# No test asserts a time (the developer guide's rule): an example slowed by a busy machine, such as the
# other worker's tests beside it, is not a failure.
settings.register_profile("arena", deadline=None)
settings.load_profile("arena")


@pytest.fixture(autouse=True)
def structlog_defaults() -> Iterator[None]:
    """A command run in a test's process (`main([...])`) configures logging to the standard error of the
    moment, pytest's capture, which is closed after the test: later tests would log into a closed file."""
    yield
    structlog.reset_defaults()
