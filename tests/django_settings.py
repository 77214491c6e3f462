"""Settings for the test run: the product's settings, with everything the tests write kept out of `var/`."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

# Tests must never touch the developer's own database or index (and a running worker holds that index open). Each
# process of a parallel run (a pytest-xdist worker, which inherits the environment of the process that started it)
# makes its own: two processes cannot share the in-process vector index.
_inherited = os.environ.get("VERIMED_VAR_DIR")
_made_here_before = _inherited is not None and _inherited == os.environ.get("VERIMED_TEST_MADE_VAR_DIR")
if _inherited is None or (_made_here_before and "PYTEST_XDIST_WORKER" in os.environ):
    TEST_VAR_DIR = tempfile.mkdtemp(prefix="verimed-test-")
    os.environ["VERIMED_VAR_DIR"] = os.environ["VERIMED_TEST_MADE_VAR_DIR"] = TEST_VAR_DIR
else:
    TEST_VAR_DIR = ""  # given by the caller: theirs to keep
# The joined LLM file and the embedder's ONNX export are large, slow to make and identical for every checkout: kept
# beside the wheel cache (Makefile), so a fresh clone's suite reuses them as it reuses the llama-cpp-python wheel.
os.environ.setdefault("VERIMED_MODEL_CACHE", str(Path.home() / ".cache" / "verimed" / "models"))
# Playwright's sync API runs an event loop in the test thread; our tests never touch the ORM while it runs.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

from webapp.settings import *  # noqa: E402, F403

# Every Django test signs people in or creates them, and the product's PBKDF2 costs about half a second per password
# on these machines. The tests are about access rules, not hashing strength: a fast hasher keeps the same code paths.
# (The end-to-end stack runs with webapp.settings and the real hasher.)
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
