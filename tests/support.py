"""Helpers the tests share: free ports, the shared data folder, the test model."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# The model `make test` serves: DESIGN.md's fast model, Qwen2.5-Coder-0.5B. In fresh clones' suites on two AVX2 cores
# it read prompts at 31 tokens/s against the product's 1.5B's 21, and its server worked 6.3-6.7 minutes against 8.9
# (benchmarks/HISTORY.md, "`make test`'s wall time"); it still cites the stacks' questions. The product default is
# served end to end by `make drills` and `make vllm-check`, which set VERIMED_TEST_LLM_MODEL to it.
TEST_LLM_MODEL = os.environ.get("VERIMED_TEST_LLM_MODEL", "qwen2.5-coder-0.5b-instruct")


def shared_data_dir() -> Path:
    """The shared real data; missing data fails the test run loudly instead of skipping tests."""
    path = Path(os.environ.get("VERIMED_DATA_DIR", REPO.parent / "shared" / "data")).resolve()
    if not path.is_dir():
        raise RuntimeError(f"shared data not found at {path}; set VERIMED_DATA_DIR")
    return path


def run_with_django_settings(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`python *args` in the checkout with webapp.settings and `env`: how settings read a given environment."""
    # Only the basics of this process's environment: the test run's own VERIMED_* must not leak in.
    base = {key: os.environ[key] for key in ("PATH", "HOME", "LANG") if key in os.environ}
    return subprocess.run(
        [sys.executable, *args],
        cwd=REPO,
        env={**base, "DJANGO_SETTINGS_MODULE": "webapp.settings", **env},
        capture_output=True,
        text=True,
        timeout=180,
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
