"""Test set-up shared by every folder: the deliberately bad bots in tests/bots are importable by name,
structlog's defaults are put back after every test, hypothesis sets no deadline, and under pytest-xdist a
module runs whole on one worker."""

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


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """pytest-xdist's `--dist loadgroup` (pyproject's addopts) hands a worker a group of tests at once: a
    test not marked `xdist_group` is put in its module's group (named by the module's file, unique in
    tests/), so that a module runs whole on one worker and its module-scoped servers, bots and clusters
    start once, not once per worker. Runs before pytest-xdist's own hook, which reads the marks."""
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.path.stem))
