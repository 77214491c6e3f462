"""A question whose LLM server is down ends failed with a readable reason, and no page returns a 500."""

from __future__ import annotations

import pytest
from django.test import Client
from pytest_django.fixtures import Settings

from indexer.records import ArticleRecord
from tests.support import free_port
from webapp.qa.models import Question
from webapp.qa.services import admission, generate, retrieve, verify
from webapp.qa.tasks import question_generate_task, question_retrieve_task

pytestmark = [pytest.mark.model, pytest.mark.django_db(transaction=True)]


def test_it_fails_cleanly_when_the_llm_server_is_down(
    settings: Settings, indexed_articles: list[ArticleRecord], site_admin_client: Client
) -> None:
    settings.VERIMED = settings.VERIMED.replace(
        VERIMED_LLM_BASE_URL=f"http://127.0.0.1:{free_port()}/v1"
    )  # nothing listens there
    settings.VERIMED = settings.VERIMED.replace(VERIMED_LLM_TIMEOUT_SECONDS=2)
    question = admission.question_create(text="Does everolimus inhibit mTORC1?", enqueue=False)

    assert question_retrieve_task.apply(args=(question.pk,), throw=False).successful()
    generated = question_generate_task.apply(args=(question.pk,), throw=False)

    assert generated.failed()
    question.refresh_from_db()
    assert question.status == Question.Status.FAILED
    assert "unreachable" in question.error
    assert question.retrieved.count() == 2

    page = site_admin_client.get(f"/questions/{question.pk}/")
    assert page.status_code == 200
    payload = site_admin_client.get(f"/questions/{question.pk}.json").json()
    assert payload["status"] == "failed"
    assert "unreachable" in payload["error"]


def test_it_says_it_cannot_answer_when_nothing_is_retrieved(indexed_articles: list[ArticleRecord]) -> None:
    question = admission.question_create(text="the of and", enqueue=False)  # only stopwords: no lexical hits
    retrieve.question_retrieve(question_id=question.pk)
    question.retrieved.all().delete()  # the dense leg always returns neighbours; simulate an empty index
    generate.question_generate(question_id=question.pk)
    verify.question_verify(question_id=question.pk)
    question.refresh_from_db()
    assert question.cannot_answer
    assert "does not answer" in question.answer_text
    assert question.status == Question.Status.DONE
    assert not question.sentences.exists()


def test_the_pipeline_names_three_registered_stages_each_routed_to_a_queue() -> None:
    from django.conf import settings

    from webapp.celery import app as celery_app
    from webapp.qa.services.publishing import question_pipeline

    stages = question_pipeline(7).tasks
    names = [stage.task for stage in stages]

    assert names == ["qa.question_retrieve", "qa.question_generate", "qa.question_verify"]
    assert all(name in celery_app.tasks for name in names)
    assert all(name in settings.CELERY_TASK_ROUTES for name in names)
    assert stages[0].args == (7,)
    assert stages[0].immutable
    assert stages[1].args == stages[2].args == ()  # they take the id the previous stage returns
