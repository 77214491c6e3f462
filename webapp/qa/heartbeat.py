"""Each Celery worker says it is alive: a thread of its main process writes the time and the queues it consumes to its
WorkerHeartbeat row every HEARTBEAT_SECONDS, from the moment it is ready (webapp/celery.py).

A question's row does not move while it waits in the broker or for a worker, so its age alone cannot tell a backlog
from a dead worker; the heartbeat can (Question.lost). The main process beats, not the pool's: it lives as long as the
worker does, while a task that runs for hours (a rebuild on the embedded profile's one worker) keeps a pool process
from doing anything else.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable

from django.db import connection
from django.utils import timezone

from webapp.qa.models import WorkerHeartbeat

HEARTBEAT_SECONDS = 30.0

logger = logging.getLogger(__name__)


def worker_heartbeat_beat(*, name: str, queues: Iterable[str]) -> None:
    WorkerHeartbeat.objects.update_or_create(
        name=name[:255], defaults={"queues": ",".join(sorted(queues))[:255], "beat_at": timezone.now()}
    )


def heartbeat_start(
    *, name: str, queues: Iterable[str], every: float = HEARTBEAT_SECONDS, stop: threading.Event | None = None
) -> threading.Thread:
    """Beat now and then every `every` seconds, in a daemon thread, for as long as the process lives (or until
    `stop` is set)."""
    consumed = sorted(queues)
    stopping = stop or threading.Event()

    def beat_forever() -> None:
        while not stopping.is_set():
            try:
                worker_heartbeat_beat(name=name, queues=consumed)
            except Exception:  # a database down for a while: the next beat tries again
                logger.warning("worker %s could not write its heartbeat", name, exc_info=True)
            finally:
                connection.close()  # this thread's own connection: a restarted database finds none held open
            stopping.wait(every)

    thread = threading.Thread(target=beat_forever, name="verimed-worker-heartbeat", daemon=True)
    thread.start()
    return thread
