from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.webapp.qa.test_backend_faults import broker_down  # noqa: F401 (a fixture the library tests use)
from webapp.library.engines import release_library_engines


@pytest.fixture
def library_engines(own_index: Path) -> Iterator[None]:
    """The library's indexes in this test's own index folder, closed after it (the worker of a stack never shares
    them with a test)."""
    release_library_engines()
    yield
    release_library_engines()
