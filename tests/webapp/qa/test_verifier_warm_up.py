"""Tests for the worker's warm-up of the verifier: in the background, loaded once, never fatal."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import pytest
from pytest_django.fixtures import Settings

from webapp.qa import verification
from webapp.qa.pipeline import default_pipeline_settings


@pytest.fixture(autouse=True)
def _no_models_kept() -> Any:
    verification._claim_classifier.cache_clear()
    verification._evidence_finder.cache_clear()
    yield
    verification._claim_classifier.cache_clear()
    verification._evidence_finder.cache_clear()


def test_the_warm_up_loads_the_models_that_the_first_question_then_uses(settings: Settings) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_VERIFIER="fake", VERIMED_EVIDENCE_FINDER="fake")

    thread = verification.warm_up_verifier_in_background()
    thread.join(timeout=60)

    assert not thread.is_alive()
    assert verification._claim_classifier.cache_info().currsize == 1
    assert verification._evidence_finder.cache_info().currsize == 1
    first = verification.answer_verifier(default_pipeline_settings())
    assert verification._claim_classifier.cache_info().hits >= 1, "the question reused the warmed model"
    assert first.classifier is verification.answer_verifier(default_pipeline_settings()).classifier


def test_a_model_asked_for_by_two_threads_at_once_is_loaded_once(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_VERIFIER="fake", VERIMED_EVIDENCE_FINDER="fake")
    builds: list[object] = []
    real_build = verification.build_claim_classifier  # type: ignore[attr-defined]

    def slow_build(options: Any) -> Any:
        builds.append(options)
        time.sleep(0.3)  # a checkpoint takes seconds to load: the second caller arrives meanwhile
        return real_build(options)

    monkeypatch.setattr(verification, "build_claim_classifier", slow_build)
    pipeline = default_pipeline_settings()
    verifiers: list[Any] = []
    threads = [threading.Thread(target=lambda: verifiers.append(verification.answer_verifier(pipeline))) for _ in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert len(builds) == 1
    assert verifiers[0].classifier is verifiers[1].classifier


def test_a_checkpoint_that_cannot_load_is_logged_and_left_to_the_first_question(
    settings: Settings, tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_VERIFIER_MODEL=str(tmp_path / "no-such-checkpoint"))

    with caplog.at_level(logging.WARNING, logger="webapp.qa.verification"):
        thread = verification.warm_up_verifier_in_background()
        thread.join(timeout=60)

    assert not thread.is_alive()
    assert "could not load the verifier ahead of the first question" in caplog.text
    assert verification._claim_classifier.cache_info().currsize == 0, "nothing broken is kept"


@pytest.mark.parametrize(("queues", "warmed"), [({"llm"}, True), ({"verify"}, True), ({"ingest", "embed"}, False)])
def test_a_worker_warms_the_verifier_only_for_the_queues_that_read_it(
    queues: set[str], warmed: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from webapp import celery
    from webapp.corpus import engines
    from webapp.qa import llm

    started: list[str] = []
    monkeypatch.setattr(engines, "warm_up", lambda parts: None)
    monkeypatch.setattr(llm, "warm_up_llm_in_background", lambda: started.append("llm"))
    monkeypatch.setattr(verification, "warm_up_verifier_in_background", lambda: started.append("verifier"))

    celery.worker_warm_up(queues)

    assert ("verifier" in started) is warmed
