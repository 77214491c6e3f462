"""Long tasks run once: Redis keeps a delivered task from other workers for longer than any task may run, and a second
copy of a running rebuild or file embed, delivered all the same, does nothing (webapp/task_locks.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import run_with_django_settings
from webapp.corpus.models import IndexJob, PubmedFile
from webapp.corpus.services.indexing import pubmed_file_embed
from webapp.corpus.services.rebuild_job import index_job_rebuild
from webapp.task_locks import running_alone

# Every task's hard time limit (its own, or the default), and the visibility timeout, as a production worker has them.
LIMITS = """
import json, django
django.setup()
from django.conf import settings
from webapp.celery import app
app.loader.import_default_modules()
limits = {name: task.time_limit or settings.CELERY_TASK_TIME_LIMIT for name, task in app.tasks.items()
          if not name.startswith("celery.")}
print(json.dumps({"visibility_timeout": app.conf.broker_transport_options.get("visibility_timeout"),
                  "limits": limits}))
"""


def test_redis_hides_a_delivered_task_from_other_workers_longer_than_any_task_may_run(tmp_path: Path) -> None:
    env = {"CELERY_BROKER_URL": "redis://127.0.0.1:6379/0", "VERIMED_VAR_DIR": str(tmp_path)}
    result = run_with_django_settings(env, "-c", LIMITS)
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout.strip().splitlines()[-1])

    assert found["limits"]["corpus.index_rebuild"] >= 4 * 3600  # the longest, and the reason for the setting
    assert found["visibility_timeout"] is not None
    assert found["visibility_timeout"] > max(found["limits"].values())


def test_a_longer_default_time_limit_raises_the_visibility_timeout_with_it(tmp_path: Path) -> None:
    env = {
        "CELERY_BROKER_URL": "redis://127.0.0.1:6379/0",
        "VERIMED_VAR_DIR": str(tmp_path),
        "VERIMED_TASK_TIME_LIMIT": str(6 * 3600),
        "VERIMED_TASK_SOFT_TIME_LIMIT": str(6 * 3600 - 60),
        "VERIMED_QUESTION_LOST_MINUTES": "400",
        "VERIMED_DEEP_CHECK_LOST_MINUTES": "400",
    }
    result = run_with_django_settings(env, "-c", LIMITS)
    assert result.returncode == 0, result.stderr

    assert json.loads(result.stdout.strip().splitlines()[-1])["visibility_timeout"] > 6 * 3600


@pytest.mark.django_db
def test_a_second_copy_of_a_running_rebuild_does_nothing() -> None:
    job = IndexJob.objects.create(kind=IndexJob.Kind.REBUILD, status=IndexJob.Status.RUNNING)

    with running_alone(f"index-rebuild-{job.pk}") as first_copy_runs:
        assert first_copy_runs
        index_job_rebuild(job_id=job.pk)  # the redelivered copy

    job.refresh_from_db()
    assert (job.status, job.error, job.finished_at) == (IndexJob.Status.RUNNING, "", None)
    assert "second copy" in job.events.get().message


@pytest.mark.django_db
def test_a_rebuild_redelivered_after_its_worker_died_fails_for_a_fresh_start() -> None:
    job = IndexJob.objects.create(kind=IndexJob.Kind.REBUILD, status=IndexJob.Status.RUNNING)

    index_job_rebuild(job_id=job.pk)  # no copy holds the lock: the first died

    job.refresh_from_db()
    assert job.status == IndexJob.Status.FAILED
    assert "interrupted" in job.error


@pytest.mark.django_db
def test_a_second_copy_of_a_running_file_embed_counts_nothing() -> None:
    job = IndexJob.objects.create(kind=IndexJob.Kind.BASELINE, status=IndexJob.Status.RUNNING, files_total=2)
    stored = PubmedFile.objects.create(name="pubmed26n0001.xml.gz", status=PubmedFile.Status.STORED, job=job)

    with running_alone(f"pubmed-file-embed-{stored.pk}") as first_copy_runs:
        assert first_copy_runs
        pubmed_file_embed(file_id=stored.pk)  # the redelivered copy

    job.refresh_from_db()
    stored.refresh_from_db()
    assert (job.files_done, job.status) == (0, IndexJob.Status.RUNNING)
    assert stored.status == PubmedFile.Status.STORED
