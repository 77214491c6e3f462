"""Session-wide fixtures: the real LLM server the generator and verifier tests talk to."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings

from tests.support import REPO, TEST_LLM_MODEL, free_port, shared_data_dir, wait_for_http


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Remove the throw-away folder the test settings created for the database and the indexes."""
    from webapp.corpus import engines

    engines.release_engines()
    if getattr(settings, "TEST_VAR_DIR", ""):
        shutil.rmtree(settings.TEST_VAR_DIR, ignore_errors=True)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return shared_data_dir()


@pytest.fixture(scope="session")
def llm_base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama.cpp's OpenAI-compatible server with the packaged Qwen model, started once for the session."""
    port = free_port()
    log_path = tmp_path_factory.mktemp("llm") / "llm.log"
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "generator.serve", "--model", TEST_LLM_MODEL, "--port", str(port),
             "--cache", str(settings.VERIMED_MODEL_CACHE), "--n-ctx", "8192"],
            cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        wait_for_http(f"{base_url}/models", timeout=300, alive=process)
    except Exception:
        process.kill()
        raise RuntimeError(f"LLM server did not start:\n{log_path.read_text()[-3000:]}") from None
    yield base_url
    process.terminate()
    process.wait(timeout=30)
