"""Session-wide fixtures: the real LLM server the generator and verifier tests talk to."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from django.conf import settings

from generator.serve import served_model
from indexer.embedder import SentenceTransformerEmbedder
from tests.support import TEST_LLM_MODEL, shared_data_dir


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Remove the throw-away folder the test settings created for the database and the indexes."""
    from webapp.corpus import engines

    engines.release_engines()
    if getattr(settings, "TEST_VAR_DIR", ""):
        shutil.rmtree(settings.TEST_VAR_DIR, ignore_errors=True)


# Fixtures that load a real model or start processes: a test using one (directly or through another fixture) gets the
# marker, so `make test-fast` can leave it out without anyone having to remember to mark it.
MARKER_BY_FIXTURE = {
    "minilm": "model",
    "llm_base_url": "model",
    "stack": "stack",
    "page": "browser",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for fixture in getattr(item, "fixturenames", ()):
            if marker := MARKER_BY_FIXTURE.get(fixture):
                item.add_marker(marker)


@pytest.fixture(scope="session")
def minilm() -> SentenceTransformerEmbedder:
    """The packaged all-MiniLM-L6-v2, loaded once for the whole session."""
    model = SentenceTransformerEmbedder()
    model.warm_up()
    return model


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return shared_data_dir()


@pytest.fixture(scope="session")
def llm_base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama.cpp's OpenAI-compatible server with the packaged Qwen model, started once for the session."""
    log_path = tmp_path_factory.mktemp("llm") / "llm.log"
    with ExitStack() as stack:
        try:
            base_url = stack.enter_context(
                served_model(TEST_LLM_MODEL, cache=settings.VERIMED.paths.model_cache, n_ctx=8192, log_path=log_path)
            )
        except (RuntimeError, TimeoutError) as exc:
            raise RuntimeError(f"LLM server did not start: {exc}\n{log_path.read_text()[-3000:]}") from None
        yield base_url
