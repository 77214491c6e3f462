"""Reading a stored answer again today (a re-check, a deep check): the question's own search settings, with the parts
named taken from the settings the site runs now."""

from __future__ import annotations

import pytest

from webapp.qa.models import Question
from webapp.qa.pipeline import SITE_LANGUAGE_MODEL, SITE_VERIFIER, default_pipeline_settings, pipeline_rereading

pytestmark = pytest.mark.django_db


def _answered_with_other_settings() -> Question:
    site = default_pipeline_settings()
    stored = site.model_copy(
        update={
            "retrieval": site.retrieval.model_copy(update={"top_k": site.retrieval.top_k + 3}),
            "verification": site.verification.model_copy(update={"verifier": "llm-judge"}),
            "llm_model": "the-model-of-that-day",
        }
    )
    return Question.objects.create(text="Is metformin safe?", settings=stored.model_dump(mode="json"))


def test_a_recheck_keeps_the_questions_search_and_model_with_the_sites_verifier() -> None:
    question = _answered_with_other_settings()
    site = default_pipeline_settings()

    pipeline = pipeline_rereading(question, site_parts=SITE_VERIFIER)

    assert pipeline.retrieval.top_k == site.retrieval.top_k + 3
    assert pipeline.verification == site.verification
    assert pipeline.llm_model == "the-model-of-that-day"


def test_a_deep_check_also_takes_the_sites_language_model() -> None:
    question = _answered_with_other_settings()
    site = default_pipeline_settings()

    pipeline = pipeline_rereading(question, site_parts=SITE_VERIFIER | SITE_LANGUAGE_MODEL)

    assert pipeline.retrieval.top_k == site.retrieval.top_k + 3
    assert (pipeline.verification, pipeline.llm_model, pipeline.llm_base_url) == (
        site.verification,
        site.llm_model,
        site.llm_base_url,
    )


def test_settings_that_no_longer_validate_read_as_the_sites_own() -> None:
    question = Question.objects.create(text="Is metformin safe?", settings={"retrieval": {"top_k": "many"}})

    assert pipeline_rereading(question, site_parts=SITE_VERIFIER) == default_pipeline_settings()
