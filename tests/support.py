"""Helpers the tests share: free ports, waiting for servers, the shared data folder, the test model."""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# The model the tests serve: the product default, because only it cites reliably enough to verify something.
TEST_LLM_MODEL = os.environ.get("VERIMED_TEST_LLM_MODEL", "qwen2.5-coder-1.5b-instruct")


def shared_data_dir() -> Path:
    """The shared real data; missing data fails the test run loudly instead of skipping tests."""
    path = Path(os.environ.get("VERIMED_DATA_DIR", REPO.parent / "shared" / "data")).resolve()
    if not path.is_dir():
        raise RuntimeError(f"shared data not found at {path}; set VERIMED_DATA_DIR")
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_http(url: str, *, timeout: float, alive: subprocess.Popen[bytes] | None = None) -> None:
    """Poll `url` until it answers 200; fail early if the process that should serve it has died."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        if alive is not None and alive.poll() is not None:
            raise RuntimeError(f"the server behind {url} exited with {alive.returncode}")
        time.sleep(0.5)
    raise TimeoutError(f"{url} did not answer within {timeout:.0f} s")
