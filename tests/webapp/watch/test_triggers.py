"""What re-checks watched answers: the end of a job that changed the corpus (a PubMed sync, an index rebuild), sent
by the corpus as a signal once the job's finish is committed. Only watched, answered questions are re-checked, once
per job; tasks run eagerly here, through the real signal, task and service."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import transaction

import webapp.watch.tasks  # noqa: F401  (registers the task the services name)
from tests.webapp.factories import answer_with_three_verdicts
from tests.webapp.watch.conftest import FakeSearch
from webapp import task_publishing
from webapp.celery import app
from webapp.corpus.models import IndexJob
from webapp.corpus.services.jobs import index_job_finish, index_job_finish_if_complete
from webapp.qa.models import Question
from webapp.watch import services
from webapp.watch.models import Recheck, Watch

pytestmark = pytest.mark.django_db

Capture = Callable[..., Any]


@pytest.fixture(autouse=True)
def eager_tasks() -> Iterator[None]:
    previous = app.conf.task_always_eager, app.conf.task_eager_propagates
    app.conf.task_always_eager, app.conf.task_eager_propagates = True, True
    yield
    app.conf.task_always_eager, app.conf.task_eager_propagates = previous


@pytest.fixture
def others(owner: User) -> list[Question]:
    """A question nobody watches, and a watched one that is not answered."""
    unwatched = answer_with_three_verdicts(user=owner, text="Is metformin safe?")
    unfinished = Question.objects.create(text="Still running?", user=owner, status=Question.Status.GENERATING)
    Watch.objects.create(user=owner, question=unfinished)
    return [unwatched, unfinished]


def _files_job_finished(kind: IndexJob.Kind, *, done: int, failed: int = 0) -> IndexJob:
    """A job of `done` + `failed` files whose last file has just ended, as the indexing steps finish it."""
    job = IndexJob.objects.create(kind=kind, files_total=done + failed, files_done=done, files_failed=failed)
    with transaction.atomic():
        assert index_job_finish_if_complete(job.pk)
    return job


def test_the_end_of_an_update_sync_rechecks_each_watched_answer_once(
    watched: Question, others: list[Question], search: FakeSearch, django_capture_on_commit_callbacks: Capture
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        job = _files_job_finished(IndexJob.Kind.UPDATES, done=1)

    recheck = Recheck.objects.get()
    assert (recheck.question, recheck.trigger, recheck.key) == (watched, "sync", f"job-{job.pk}")
    assert len(search.calls) == 1, "the unwatched and the unanswered questions are not re-checked"


def test_a_sync_that_failed_after_indexing_some_files_still_rechecks(
    watched: Question, search: FakeSearch, django_capture_on_commit_callbacks: Capture
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        job = _files_job_finished(IndexJob.Kind.UPDATES, done=1, failed=1)

    assert IndexJob.objects.get(pk=job.pk).status == IndexJob.Status.FAILED
    assert Recheck.objects.get().trigger == "sync"


def test_the_end_of_a_rebuild_rechecks_and_a_failed_rebuild_does_not(
    watched: Question, search: FakeSearch, django_capture_on_commit_callbacks: Capture
) -> None:
    failed = IndexJob.objects.create(kind=IndexJob.Kind.REBUILD)
    done = IndexJob.objects.create(kind=IndexJob.Kind.REBUILD)

    with django_capture_on_commit_callbacks(execute=True):
        index_job_finish(job_id=failed.pk, status=IndexJob.Status.FAILED, message="rebuild failed", error="disk")
        index_job_finish(job_id=done.pk, status=IndexJob.Status.DONE, message="rebuild done")

    recheck = Recheck.objects.get()
    assert (recheck.trigger, recheck.key) == ("rebuild", f"job-{done.pk}")


def test_a_sync_with_nothing_to_do_rechecks_nothing(
    watched: Question, search: FakeSearch, django_capture_on_commit_callbacks: Capture
) -> None:
    job = IndexJob.objects.create(kind=IndexJob.Kind.UPDATES)

    with django_capture_on_commit_callbacks(execute=True):
        index_job_finish(job_id=job.pk, status=IndexJob.Status.DONE, message="nothing to do: job done")

    assert not Recheck.objects.exists()


def test_nothing_is_queued_before_the_jobs_finish_commits(
    watched: Question, search: FakeSearch, django_capture_on_commit_callbacks: Capture
) -> None:
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        _files_job_finished(IndexJob.Kind.UPDATES, done=1)

    assert not Recheck.objects.exists()
    assert len(callbacks) == 1


def test_a_listener_that_fails_leaves_the_job_finished(
    watched: Question,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Capture,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def failing(**kwargs: object) -> int:
        raise ConnectionError("the broker is down")

    monkeypatch.setattr("webapp.watch.receivers.rechecks_enqueue_after_job", failing)

    with django_capture_on_commit_callbacks(execute=True):
        job = _files_job_finished(IndexJob.Kind.UPDATES, done=1)

    assert IndexJob.objects.get(pk=job.pk).status == IndexJob.Status.DONE
    assert "the broker is down" in caplog.text


def test_a_redelivered_recheck_task_stores_one_recheck(
    watched: Question, search: FakeSearch, django_capture_on_commit_callbacks: Capture
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        services.rechecks_enqueue_after_job(job_id=_job_with_files().pk, kind="updates", status="done")
        services.rechecks_enqueue_after_job(job_id=IndexJob.objects.get().pk, kind="updates", status="done")

    assert Recheck.objects.count() == 1
    assert len(search.calls) == 1, "the second delivery found the stored re-check and checked nothing"


def _job_with_files() -> IndexJob:
    return IndexJob.objects.create(kind=IndexJob.Kind.UPDATES, status=IndexJob.Status.DONE, files_total=1, files_done=1)


def test_with_the_broker_down_every_watched_answer_is_tried_and_the_failures_are_counted(
    watched: Question,
    owner: User,
    broker_down: None,
    caplog: pytest.LogCaptureFixture,
    django_capture_on_commit_callbacks: Capture,
) -> None:
    app.conf.task_always_eager = False  # published to the broker (that is down), not run here
    second = answer_with_three_verdicts(user=owner, text="Is metformin safe?")
    Watch.objects.create(user=owner, question=second)
    job = _job_with_files()

    with django_capture_on_commit_callbacks(execute=True):
        fan_out = services.rechecks_enqueue_after_job(job_id=job.pk, kind="updates", status="done")

    assert (fan_out.queued, fan_out.failed) == (0, 2)
    for question in (watched, second):
        assert f"re-check job-{job.pk} of question {question.pk} could not be queued" in caplog.text
    assert f"job {job.pk}: 2 of 2 watched answers could not be queued for a re-check" in caplog.text
    assert not Recheck.objects.exists()


def test_with_the_broker_down_only_the_first_re_check_waits_through_the_publishing_retries(
    watched: Question,
    owner: User,
    broker_down: None,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Capture,
) -> None:
    app.conf.task_always_eager = False
    for number in range(3):
        Watch.objects.create(user=owner, question=answer_with_three_verdicts(user=owner, text=f"Question {number}?"))
    retries: list[bool] = []
    publish = task_publishing.task_publish
    monkeypatch.setattr(
        task_publishing, "task_publish", lambda task, *, retry=True: (retries.append(retry), publish(task, retry=retry))
    )

    with django_capture_on_commit_callbacks(execute=True):
        fan_out = services.rechecks_enqueue_after_job(job_id=_job_with_files().pk, kind="updates", status="done")

    assert (fan_out.queued, fan_out.failed) == (0, 4), "every watched answer was still tried"
    assert retries == [True, False, False, False]
