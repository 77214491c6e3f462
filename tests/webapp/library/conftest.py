from __future__ import annotations

from tests.webapp.qa.test_backend_faults import broker_down  # noqa: F401 (a fixture the library tests use)
