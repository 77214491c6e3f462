"""What the corpus tells the rest of the site. Sent here, received elsewhere: the corpus never imports the apps that
listen (watched answers are re-checked when a job has changed the corpus, webapp/watch/receivers.py)."""

from __future__ import annotations

import logging

from django.db import transaction
from django.dispatch import Signal

logger = logging.getLogger(__name__)

# Sent once a job's finish is committed, with `job_id`, `kind` and `status` (IndexJob.Kind and IndexJob.Status values).
index_job_finished = Signal()


def index_job_announce_finished(*, job_id: int, kind: str, status: str) -> None:
    """Send `index_job_finished` after the current transaction commits (at once outside one). A listener that fails
    is logged: the job has finished whatever its listeners do."""

    def send() -> None:
        for receiver, result in index_job_finished.send_robust(sender=None, job_id=job_id, kind=kind, status=status):
            if isinstance(result, Exception):
                logger.error("job %s: %r failed on index_job_finished: %s", job_id, receiver, result, exc_info=result)

    transaction.on_commit(send)
