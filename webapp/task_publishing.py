"""Handing a task to the broker, as every part of the site that enqueues work does it.

A broker that is down must not hang the request (or the job) that enqueues: publishing tries a few times, briefly,
then gives up. Where a row waits on the task, the caller records why it will never run instead of leaving it queued.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from celery.canvas import Signature

logger = logging.getLogger(__name__)

PUBLISH_RETRY_POLICY = {"max_retries": 2, "interval_start": 0.2, "interval_step": 0.5, "interval_max": 1.0}


def task_publish(task: Signature, *, retry: bool = True) -> None:
    """Publish `task`, retrying briefly unless `retry` is off; the broker's error is raised when it cannot take it."""
    task.apply_async(retry=retry, retry_policy=PUBLISH_RETRY_POLICY)


def task_publish_or_record(
    task: Signature, *, what: str, record_unreachable: Callable[[], None], retry: bool = True
) -> bool:
    """Publish `task`; when the broker cannot take it, log it, call `record_unreachable` (which tells the waiting row
    why) and return False."""
    from kombu.exceptions import OperationalError

    try:
        task_publish(task, retry=retry)
    except (OperationalError, ConnectionError, OSError) as exc:
        logger.warning("%s could not be queued: %s", what, exc)
        record_unreachable()
        return False
    return True
