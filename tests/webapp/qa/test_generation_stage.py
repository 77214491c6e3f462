"""The generation stage against the real model server: what the model saw, canonical citations, timings, and
stopping a question from the page or the API."""

from __future__ import annotations

import threading
import time

import pytest
from django.test import Client
from pytest_django.fixtures import Settings

from generator.base import LLMSettings
from generator.context_focus import packed_context
from generator.llm import ServerTokenCounter
from indexer.records import ArticleRecord
from tests.support import TEST_LLM_MODEL
from webapp.qa.context import generation_context
from webapp.qa.llm import token_counter_for
from webapp.qa.models import Question
from webapp.qa.services import admission, generate, retrieve, verify
from webapp.qa.services.stages import stage_pipeline
from webapp.qa.tasks import question_generate_task, question_retrieve_task, question_verify_task

pytestmark = [pytest.mark.model, pytest.mark.django_db(transaction=True)]

QUESTION = "Does everolimus inhibit mTORC1?"
OPEN_QUESTION = "How does everolimus act on mTORC1?"


@pytest.fixture
def served(settings: Settings, llm_base_url: str) -> str:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_LLM_BASE_URL=llm_base_url)
    settings.VERIMED = settings.VERIMED.replace(VERIMED_LLM_MODEL=TEST_LLM_MODEL)
    settings.VERIMED = settings.VERIMED.replace(VERIMED_LLM_MAX_TOKENS=150)
    return llm_base_url


def retrieved_question(text: str = QUESTION) -> Question:
    question = admission.question_create(text=text, enqueue=False)
    retrieve.question_retrieve(question_id=question.pk)
    return question


def test_generation_records_what_the_model_saw_and_its_timings(
    served: str, indexed_articles: list[ArticleRecord]
) -> None:
    question = retrieved_question()

    generate.question_generate(question_id=question.pk)
    verify.question_verify(question_id=question.pk)

    question.refresh_from_db()
    retrieved = list(question.retrieved.values_list("pmid", flat=True))
    assert question.context["given"] == retrieved  # two short abstracts fit the 8k window whole
    assert question.context["dropped"] == []
    assert question.context["trimmed"] == []
    assert 0 < question.context["prompt_tokens"] <= question.context["budget_tokens"]
    assert question.context["prompt_style"] == "chat-complete"
    assert question.answer_raw
    assert question.answer_text
    assert "10000002" in question.answer_text  # the everolimus abstract is cited, in canonical form
    assert "(PUBMED:10000002" in question.answer_text
    assert question.first_token_at is not None
    assert question.timings_ms["generation_ttft"] > 0
    assert question.timings_ms["generation_tokens_per_s"] > 0
    assert question.status == Question.Status.DONE
    for sentence in question.sentences.all():
        for citation in sentence.citations.all():
            assert citation.pmid in retrieved or citation.label == "NO_REFERENCE"


def test_an_abstract_that_does_not_fit_the_window_is_dropped_and_never_linked(
    served: str, settings: Settings, indexed_articles: list[ArticleRecord]
) -> None:
    # Not a yes/no question: its prompt is the abstracts alone, with no bottom line given first (whose words depend on
    # the verifier's reading), so the window below is measured on exactly what the stage sends.
    question = retrieved_question(OPEN_QUESTION)
    retrieved = list(question.retrieved.values_list("pmid", flat=True))
    # Measure the prompt with both abstracts as the stage packs it (the server counts its tokens; the model need
    # not read it), then offer a window a little too small for the second one.
    pipeline = stage_pipeline(question)
    full = packed_context(
        question.text, generation_context(question, pipeline), pipeline.generation, counter=token_counter_for(pipeline)
    )
    assert [item.pmid for item in full.abstracts] == retrieved
    full_prompt = full.prompt_tokens
    answer_tokens = settings.VERIMED.generation.max_tokens
    counter = ServerTokenCounter(LLMSettings(base_url=served, model=TEST_LLM_MODEL))
    last_abstract = counter.count(indexed_by_pmid(indexed_articles)[retrieved[-1]].abstract)
    settings.VERIMED = settings.VERIMED.replace(
        VERIMED_LLM_CONTEXT_TOKENS=full_prompt + answer_tokens + 32 - last_abstract - 12
    )
    again = retrieved_question(OPEN_QUESTION)

    generate.question_generate(question_id=again.pk)
    verify.question_verify(question_id=again.pk)

    again.refresh_from_db()
    assert again.context["bottom_line_first"] is None
    assert again.context["given"] == retrieved[:1]
    assert again.context["dropped"] == retrieved[1:]
    assert again.context["prompt_tokens"] <= again.context["budget_tokens"]
    linked = {
        citation.pmid
        for sentence in again.sentences.all()
        for citation in sentence.citations.all()
        if citation.label != "NO_REFERENCE"
    }
    assert linked <= set(retrieved[:1])


def indexed_by_pmid(articles: list[ArticleRecord]) -> dict[str, ArticleRecord]:
    return {article.pmid: article for article in articles}


def test_a_queued_question_cancelled_from_the_page_never_runs(
    site_admin_client: Client, indexed_articles: list[ArticleRecord]
) -> None:
    question = admission.question_create(text=QUESTION, enqueue=False)

    response = site_admin_client.post(f"/questions/{question.pk}/cancel")

    assert response.status_code == 302
    assert question_retrieve_task.apply(args=(question.pk,), throw=False).successful()
    assert question_generate_task.apply(args=(question.pk,), throw=False).successful()
    question.refresh_from_db()
    assert question.status == Question.Status.CANCELLED
    assert question.cancel_requested
    assert not question.retrieved.exists()
    assert question.answer_text == ""


def test_the_cancel_endpoint_answers_json_refuses_get_and_404s_unknown_ids(site_admin_client: Client) -> None:
    question = Question.objects.create(text=QUESTION)

    answered = site_admin_client.post(f"/questions/{question.pk}/cancel", headers={"Accept": "application/json"})

    assert answered.status_code == 200
    assert answered.json() == {"id": question.pk, "status": "cancelled", "cancel_requested": True}
    assert site_admin_client.get(f"/questions/{question.pk}/cancel").status_code == 405
    assert site_admin_client.post("/questions/999999/cancel").status_code == 404


def test_cancelling_a_finished_question_changes_nothing(site_admin_client: Client) -> None:
    question = Question.objects.create(text=QUESTION, status=Question.Status.DONE, answer_text="Done (PUBMED:1).")

    site_admin_client.post(f"/questions/{question.pk}/cancel")

    question.refresh_from_db()
    assert question.status == Question.Status.DONE
    assert not question.cancel_requested


def test_stop_during_generation_ends_it_promptly_and_skips_verification(
    served: str, settings: Settings, indexed_articles: list[ArticleRecord], site_admin_client: Client
) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_LLM_MAX_TOKENS=600)
    question = admission.question_create(
        text="Describe everolimus, metformin and lactic acidosis in as much detail as you can.", enqueue=False
    )
    retrieve.question_retrieve(question_id=question.pk)
    worker = threading.Thread(target=question_generate_task.apply, args=((question.pk,),), kwargs={"throw": False})
    worker.start()
    deadline = time.monotonic() + 240  # the session's LLM server may be finishing another worker's answer first
    while not Question.objects.filter(pk=question.pk).exclude(answer_text="").exists():
        assert time.monotonic() < deadline, "no token arrived"
        time.sleep(0.1)

    site_admin_client.post(f"/questions/{question.pk}/cancel")
    stopped_at = time.monotonic()
    worker.join(timeout=30)

    assert not worker.is_alive()
    assert time.monotonic() - stopped_at < 5
    question.refresh_from_db()
    assert question.status == Question.Status.CANCELLED
    assert question.answer_raw  # the partial answer is kept
    assert question.timings_ms["generation_tokens"] < 600
    assert question_verify_task.apply(args=(question.pk,), throw=False).successful()
    question.refresh_from_db()
    assert question.status == Question.Status.CANCELLED
    assert not question.sentences.exists()
