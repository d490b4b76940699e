"""The site's tests log through structlog's defaults: an earlier test's `main()` may have configured it to
write to a capture that is closed now."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import structlog


@pytest.fixture(autouse=True, scope="module")
def default_logging() -> Iterator[None]:
    structlog.reset_defaults()
    yield
    structlog.reset_defaults()
