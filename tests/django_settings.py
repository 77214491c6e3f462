"""Settings for the test run: the product's settings, with everything the tests write kept out of `var/`."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

_REPO = Path(__file__).resolve().parent.parent
# Tests must never touch the developer's own database or index (and a running worker holds that index open).
if "VERIMED_VAR_DIR" not in os.environ:
    os.environ["VERIMED_VAR_DIR"] = TEST_VAR_DIR = tempfile.mkdtemp(prefix="verimed-test-")
else:
    TEST_VAR_DIR = ""  # given by the caller: theirs to keep
# The joined model file is large and identical for every run: share the cache `make run` uses.
os.environ.setdefault("VERIMED_MODEL_CACHE", str(_REPO / "var" / "models"))
# Playwright's sync API runs an event loop in the test thread; our tests never touch the ORM while it runs.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

from webapp.settings import *  # noqa: E402, F403

# Every Django test signs people in or creates them, and the product's PBKDF2 costs about half a second per password
# on these machines. The tests are about access rules, not hashing strength: a fast hasher keeps the same code paths.
# (The end-to-end stack runs with webapp.settings and the real hasher.)
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
