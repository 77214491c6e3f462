"""A backend that is down while a question runs: the question ends failed with a reason the page shows, transient
errors are retried first, and the rest of the site keeps serving pages.

The LLM server case is in test_pipeline_failures.py. Here: the lexical engine (OpenSearch), the vector store (Qdrant
server) and the Celery broker, each pointed at a loopback port where nothing listens.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from django.test import Client
from pytest_django.fixtures import Settings

from tests.support import free_port
from webapp.celery import app as celery_app
from webapp.corpus import engines
from webapp.qa.models import Question
from webapp.qa.services import admission, retrieve
from webapp.qa.tasks import MAX_RETRIES, question_retrieve_task

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def fresh_engines() -> Iterator[None]:
    """Engines rebuilt from the settings this test sets, and the session's own engines back afterwards."""
    engines.release_engines()
    yield
    engines.release_engines()


def _count_retrieval_attempts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    attempts: list[int] = []
    original = retrieve.question_retrieve

    def counted(*, question_id: int) -> None:
        attempts.append(question_id)
        original(question_id=question_id)

    monkeypatch.setattr(retrieve, "question_retrieve", counted)
    return attempts


def _assert_failed_and_site_still_serves(question: Question, client: Client, words: str) -> None:
    question.refresh_from_db()
    assert question.status == Question.Status.FAILED
    assert words in question.error.lower()
    page = client.get(f"/questions/{question.pk}/")
    assert page.status_code == 200
    assert client.get(f"/questions/{question.pk}.json").json()["status"] == "failed"
    assert client.get("/").status_code == 200
    assert client.get("/history/").status_code == 200


@pytest.mark.parametrize(
    ("backend_setting", "url_setting", "backend", "says"),
    [
        ("VERIMED_LEXICAL_BACKEND", "VERIMED_OPENSEARCH_URL", "opensearch", "is unreachable"),
        ("VERIMED_VECTOR_BACKEND", "VERIMED_QDRANT_URL", "qdrant", "cannot reach the qdrant server"),
    ],
    ids=["opensearch-down", "qdrant-down"],
)
def test_a_search_backend_down_fails_the_question_after_retries_and_the_site_keeps_serving(
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    fresh_engines: None,
    site_admin_client: Client,
    backend_setting: str,
    url_setting: str,
    backend: str,
    says: str,
) -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    settings.VERIMED = settings.VERIMED.replace(**{backend_setting: backend, url_setting: url})
    attempts = _count_retrieval_attempts(monkeypatch)
    question = admission.question_create(text="Does everolimus inhibit mTORC1?", enqueue=False)

    result = question_retrieve_task.apply(args=(question.pk,), throw=False)

    assert result.failed()
    assert len(attempts) == 1 + MAX_RETRIES, "a connection error is transient: the stage is retried first"
    _assert_failed_and_site_still_serves(question, site_admin_client, says)


@pytest.fixture
def broker_down() -> Iterator[None]:
    """Celery publishes to an AMQP port where nothing listens; the app's own broker is restored afterwards."""
    saved_url, saved_transport, saved_pool, saved_producers = (
        celery_app.conf.broker_url,
        celery_app.conf.broker_transport,
        celery_app._pool,
        celery_app.amqp._producer_pool,
    )
    celery_app.conf.broker_url = f"amqp://guest:guest@127.0.0.1:{free_port()}//"
    celery_app.conf.broker_transport = None  # the embedded broker's transport class goes with its URL
    celery_app._pool = None
    celery_app.amqp._producer_pool = None
    yield
    celery_app.conf.broker_url, celery_app.conf.broker_transport = saved_url, saved_transport
    celery_app._pool, celery_app.amqp._producer_pool = saved_pool, saved_producers


def test_a_broker_down_fails_the_new_question_with_a_reason_instead_of_a_500(
    broker_down: None, researcher_client: Client
) -> None:
    response = researcher_client.post("/", {"question": "Does metformin cause lactic acidosis?"})

    assert response.status_code == 302
    question = Question.objects.get()
    assert question.status == Question.Status.FAILED
    assert "task queue is unreachable" in question.error
    page = researcher_client.get(response["Location"])
    assert page.status_code == 200
    assert researcher_client.get(f"/questions/{question.pk}.json").json()["error"] == question.error


def test_a_broker_down_does_not_hold_the_request_for_long(broker_down: None, researcher_client: Client) -> None:
    started = time.monotonic()
    researcher_client.post("/", {"question": "Is aspirin useful after a heart attack?"})
    assert time.monotonic() - started < 15, "publishing gives up after a few short retries"


def test_a_database_connection_lost_mid_stage_is_retried_on_a_fresh_connection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A PostgreSQL restart kills the worker's connection mid-stage; Django would keep the dead socket until the task
    ends. The stage is retried on a new connection instead of failing, or leaving the question in its stage."""
    from django.db import OperationalError, connection

    question = admission.question_create(text="Does everolimus inhibit mTORC1?", enqueue=False)
    connections_seen: list[object] = []

    def restarted_database_once(*, question_id: int) -> None:
        connection.ensure_connection()
        connections_seen.append(connection.connection)
        if len(connections_seen) == 1:
            raise OperationalError("terminating connection due to administrator command")
        Question.objects.filter(pk=question_id).update(status=Question.Status.RETRIEVING)

    monkeypatch.setattr(retrieve, "question_retrieve", restarted_database_once)

    question_retrieve_task.apply(args=(question.pk,), throw=False)

    assert len(connections_seen) == 2
    assert connections_seen[0] is not connections_seen[1], "the retry ran on a fresh connection"
    question.refresh_from_db()
    assert question.status == Question.Status.RETRIEVING
