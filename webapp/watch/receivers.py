"""The corpus's signals this app listens to (connected in WatchConfig.ready)."""

from __future__ import annotations

from typing import Any

from django.dispatch import receiver

from webapp.corpus.signals import index_job_finished
from webapp.watch.services import rechecks_enqueue_after_job


@receiver(index_job_finished, dispatch_uid="watch.recheck_after_job")
def recheck_after_job(sender: object, *, job_id: int, kind: str, status: str, **_: Any) -> None:
    rechecks_enqueue_after_job(job_id=job_id, kind=kind, status=status)
