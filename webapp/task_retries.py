"""The retry loop every Celery task of the site shares: an error that says it is transient is retried after a
countdown while retries remain; anything else ends the work for good, and the task records why on its own rows.

Errors carry their retry semantics (`transient`, see `indexer.errors` and `generator.errors`); a task's policy
says which of those error families it retries, how often and how long it waits.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from functools import partial
from typing import Literal

from celery import Task
from celery.exceptions import SoftTimeLimitExceeded
from django.db import DatabaseError, InterfaceError, OperationalError, connection

logger = logging.getLogger(__name__)


class DatabaseUnavailableError(Exception):
    """The database dropped the connection mid-task (a restart, a failover, a network blip): worth a retry on a
    fresh connection."""

    transient = True


@contextmanager
def database_errors_as_transient() -> Iterator[None]:
    """Turn a lost database connection into DatabaseUnavailableError, closing it first: Django keeps a broken
    connection until the task ends, so without this every retry would fail on the same dead socket."""
    try:
        yield
    except (OperationalError, InterfaceError) as error:
        with suppress(DatabaseError):
            connection.close()
        raise DatabaseUnavailableError(f"the database connection was lost ({error})".strip()) from error


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int
    delay_seconds: float
    retry_on: tuple[type[Exception], ...]  # error families with a `transient` flag
    backoff: float = 1.0  # each wait is this many times the one before (2.0: doubling)

    def countdown(self, retries: int) -> float:
        """Seconds to wait before the retry that follows `retries` earlier ones."""
        return self.delay_seconds * self.backoff**retries


@dataclass(frozen=True)
class WorkFailure:
    """Why a task's work ended for good: an error not worth (or out of) retries, its time limit, or a bug."""

    error: Exception
    kind: Literal["error", "timed_out", "internal"]

    def reason(self, *, timed_out: str, internal: str) -> str:
        """The text for the row: the error's own message, or the task's words for a time limit or a bug."""
        if self.kind == "timed_out":
            return timed_out
        if self.kind == "internal":
            return f"{internal}: {self.error}"
        return str(self.error)


def retry_if_transient(
    task: Task,
    error: Exception,
    policy: RetryPolicy,
    *,
    on_retry: Callable[[float], None] | None = None,
) -> None:
    """Raise Celery's retry for a transient error while the policy has retries left; return otherwise.

    `on_retry` hears the countdown first, so a row can say that (and when) the work will be tried again.
    """
    retries = task.request.retries
    if isinstance(error, policy.retry_on) and getattr(error, "transient", False) and retries < policy.max_retries:
        countdown = policy.countdown(retries)
        if on_retry is not None:
            on_retry(countdown)
        raise task.retry(exc=error, countdown=countdown) from error


def run_retrying(
    task: Task,
    work: Callable[[], object],
    policy: RetryPolicy,
    *,
    describe: str,
    on_retry: Callable[[Exception, float], None] | None = None,
) -> WorkFailure | None:
    """Run `work` under `policy`; None when it succeeded, else the failure for the caller to record.

    `describe` names the work in the log ("question 7 in question_verify").
    """
    try:
        work()
    except policy.retry_on as error:
        retry_if_transient(task, error, policy, on_retry=None if on_retry is None else partial(on_retry, error))
        logger.warning("%s failed: %s", describe, error)
        return WorkFailure(error, "error")
    except SoftTimeLimitExceeded as error:
        logger.warning("%s ran past its soft time limit", describe)
        return WorkFailure(error, "timed_out")
    except Exception as error:
        logger.exception("%s failed", describe)
        return WorkFailure(error, "internal")
    return None
