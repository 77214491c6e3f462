"""Celery beat's scheduled corpus work.

It starts jobs the way the admin's forms do, through `starting`, which enqueues the tasks of `tasks`; kept in
`tasks` it made the two modules import each other. Celery finds this module by name (webapp/celery.py).
"""

from __future__ import annotations

import logging

from celery import shared_task

from webapp.corpus.services.jobs import IndexJobRefusedError
from webapp.corpus.services.starting import index_job_start_updates

logger = logging.getLogger(__name__)


@shared_task(name="corpus.pubmed_updates_sync_daily")
def pubmed_updates_sync_daily_task() -> int | None:
    """Celery beat's daily sync: starts what the admin's "sync updates" form starts; the id of the job, if any."""
    try:
        return index_job_start_updates(user=None).pk
    except IndexJobRefusedError as exc:
        # An updates sync or a rebuild still running: tomorrow's run picks up whatever this one would have.
        logger.info("daily PubMed updates sync skipped: %s", exc)
        return None
