"""The retry loop the question and indexing tasks share: transient errors are retried with the policy's countdown
until the retries are spent, anything else ends the work at once with its kind, for the task to record."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from celery import Task
from celery.exceptions import SoftTimeLimitExceeded

from generator.errors import LLMResponseError, LLMUnavailableError
from indexer.errors import BackendUnavailableError, CorpusFormatError
from webapp.celery import app
from webapp.task_retries import RetryPolicy, WorkFailure, run_retrying

POLICY = RetryPolicy(max_retries=2, delay_seconds=0, retry_on=(LLMUnavailableError, BackendUnavailableError))


class Attempts:
    """Raises the next error of `errors` on each call (nothing once they run out); counts the calls."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.calls = 0

    def __call__(self) -> None:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)


def _run(work: Callable[[], None], notes: list[float] | None = None) -> WorkFailure | None:
    """`work` under POLICY inside a real (eagerly applied) Celery task; the failure it ended with, if any."""
    outcome: list[WorkFailure | None] = []

    @app.task(bind=True, max_retries=POLICY.max_retries, name=f"tests.retrying.{id(work)}")
    def retrying(self: Task) -> None:
        on_retry = None if notes is None else (lambda _error, countdown: notes.append(countdown))
        outcome.append(run_retrying(self, work, POLICY, describe="test work", on_retry=on_retry))

    retrying.apply(throw=False)
    return outcome[-1] if outcome else None


def test_a_transient_error_is_retried_and_the_work_can_then_succeed() -> None:
    work = Attempts(LLMUnavailableError("server down"))
    assert _run(work) is None
    assert work.calls == 2


def test_a_transient_error_ends_the_work_once_the_retries_are_spent() -> None:
    down = BackendUnavailableError("still down")
    work = Attempts(down, down, down, down)
    notes: list[float] = []

    failure = _run(work, notes)

    assert work.calls == 1 + POLICY.max_retries
    assert notes == [0, 0], "each retry is announced with its countdown"
    assert failure == WorkFailure(down, "error")
    assert failure.reason(timed_out="-", internal="-") == "still down"


@pytest.mark.parametrize(
    "error",
    [LLMResponseError("bad model name"), CorpusFormatError("truncated gzip")],
    ids=["generation", "corpus"],
)
def test_a_permanent_error_is_not_retried(error: Exception) -> None:
    work = Attempts(error)
    failure = _run(work)
    assert work.calls == 1
    assert failure is not None
    assert failure.error is error


def test_a_time_limit_and_a_bug_end_the_work_at_once_with_their_own_words() -> None:
    timed_out = _run(Attempts(SoftTimeLimitExceeded()))
    crashed = _run(Attempts(KeyError("pmid")))

    assert timed_out is not None
    assert timed_out.kind == "timed_out"
    assert timed_out.reason(timed_out="too slow", internal="bug") == "too slow"
    assert crashed is not None
    assert crashed.kind == "internal"
    assert crashed.reason(timed_out="too slow", internal="bug in step") == "bug in step: 'pmid'"


def test_the_countdown_grows_by_the_backoff() -> None:
    doubling = RetryPolicy(max_retries=5, delay_seconds=10, retry_on=(BackendUnavailableError,), backoff=2.0)
    steady = RetryPolicy(max_retries=2, delay_seconds=3, retry_on=(LLMUnavailableError,))
    assert [doubling.countdown(retries) for retries in range(4)] == [10, 20, 40, 80]
    assert [steady.countdown(retries) for retries in range(2)] == [3, 3]
