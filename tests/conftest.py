"""Session-wide fixtures: the real LLM servers the generator and verifier tests talk to (llama.cpp; vLLM for
`make vllm-check`)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from django.conf import settings

from generator.serve_vllm import served_vllm_model
from indexer.embedder import SentenceTransformerEmbedder
from tests.support import TEST_LLM_MODEL, free_port, shared_data_dir


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
    "vllm_base_url": "vllm",
    "stack": "stack",
    "page": "browser",
}


# The groups reach pytest-xdist's scheduler through tests/xdist_groups.py; the session's one LLM server is shared
# by every worker through tests/session_llm.py.
pytest_plugins = ["tests.xdist_groups", "tests.session_llm"]


def xdist_group_of(item: pytest.Item) -> str | None:
    """`make test` runs the suite on two workers (pytest-xdist, --dist loadgroup). A stack is a session fixture that
    costs a minute to start, so the tests on one profile's stack stay together on one worker; each profile is a
    group of its own, so the two stacks run side by side. A module-scoped fixture is made once per worker that runs a
    test needing it: spread over two workers, the LLM judge's module classified its pairs twice on the one-thread
    LLM server and the backup drill built its site twice, so a module whose tests share a module-scoped fixture is a
    group too. Everything else, the LLM's tests included (the server is the session's, not the worker's), goes
    wherever a worker is free."""
    if "stack" in getattr(item, "fixturenames", ()):
        callspec = getattr(item, "callspec", None)
        profile = callspec.params.get("stack") if callspec else None
        return f"stack-{profile}" if profile else "stack"
    fixtures = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
    if any(definitions and definitions[-1].scope == "module" for definitions in fixtures.values()):
        return f"module-{item.nodeid.split('::', 1)[0]}"
    return None


@pytest.hookimpl(tryfirst=True)  # before -m deselects by these markers and before xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for fixture in getattr(item, "fixturenames", ()):
            if marker := MARKER_BY_FIXTURE.get(fixture):
                item.add_marker(marker)
        if group := xdist_group_of(item):
            item.add_marker(pytest.mark.xdist_group(group))


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
def vllm_base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """vLLM's OpenAI-compatible server (its CPU build, from the environment `make vllm-check` keeps) with the packaged
    Qwen model dequantised, started once for the session."""
    vllm_python = os.environ.get("VERIMED_VLLM_PYTHON", "")
    if not vllm_python:
        raise RuntimeError("VERIMED_VLLM_PYTHON is not set: run the vLLM tests with `make vllm-check`")
    log_path = tmp_path_factory.mktemp("vllm") / "vllm.log"
    with ExitStack() as stack:
        try:
            served = served_vllm_model(
                TEST_LLM_MODEL,
                cache=settings.VERIMED.paths.model_cache,
                vllm_python=Path(vllm_python),
                port=free_port(),
                log_path=log_path,
            )
            base_url = stack.enter_context(served)
        except (RuntimeError, TimeoutError) as exc:
            raise RuntimeError(f"vLLM did not start: {exc}\n{log_path.read_text()[-5000:]}") from None
        yield base_url
