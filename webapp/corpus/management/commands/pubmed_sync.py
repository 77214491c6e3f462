"""`manage.py pubmed_sync --baseline|--updates [--max-files N]`: bring the index up to date with NCBI's PubMed files.

Lists the files (HTTPS), skips those already indexed with the same md5, records a job and queues one chain of
download -> store -> embed per file for the worker. A killed run is resumed by running the command again: each file
restarts at the step it had reached, and a partial download continues where it stopped.
"""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from indexer.errors import IndexerError
from webapp.corpus.models import IndexJob
from webapp.corpus.services.jobs import index_job_create
from webapp.corpus.services.sync import pubmed_files_to_sync, pubmed_listing
from webapp.corpus.tasks import index_job_workflow


class Command(BaseCommand):
    help = "Download and index NCBI's PubMed baseline or update files (md5-checked, resumable, skipping done files)."

    def add_arguments(self, parser: CommandParser) -> None:
        which = parser.add_mutually_exclusive_group(required=True)
        which.add_argument("--baseline", action="store_true", help="The yearly baseline files.")
        which.add_argument("--updates", action="store_true", help="The daily update files (with deletions).")
        parser.add_argument("--max-files", type=int, help="Process at most this many of the files still to do.")
        parser.add_argument("--base-url", help="The listing to read (default: NCBI's baseline or updatefiles URL).")
        parser.add_argument("--wait", action="store_true", help="Print the job's progress until it finishes.")

    def handle(self, *args: Any, **options: Any) -> None:
        kind = IndexJob.Kind.BASELINE if options["baseline"] else IndexJob.Kind.UPDATES
        base_url = options["base_url"] or (
            settings.VERIMED.pubmed.baseline_url if options["baseline"] else settings.VERIMED.pubmed.updates_url
        )
        try:
            remote_files, md5s = pubmed_listing(base_url=base_url)
        except IndexerError as exc:
            raise CommandError(f"cannot list {base_url}: {exc}") from exc
        todo = pubmed_files_to_sync(remote_files=remote_files, md5s=md5s)
        files = todo[: options["max_files"]] if options["max_files"] is not None else todo
        self.stdout.write(
            f"{len(remote_files)} files listed at {base_url}; {len(remote_files) - len(todo)} already indexed; "
            f"{len(files)} to process now"
        )
        if not files:
            return
        job = index_job_create(kind=kind, files=files)
        index_job_workflow(job).apply_async()
        self.stdout.write(f"queued job {job.pk} ({kind}, {len(files)} files)")
        if options["wait"]:
            self._follow(job.pk)
        job.refresh_from_db()
        self.stdout.write(
            f"job {job.pk}: {job.status}; files done {job.files_done}, failed {job.files_failed} of {job.files_total}; "
            f"articles {job.articles}, deleted {job.deleted}"
        )
        if job.status == IndexJob.Status.FAILED:
            raise CommandError(job.error)

    def _follow(self, job_id: int) -> None:
        while True:
            job = IndexJob.objects.get(pk=job_id)
            eta = f", ETA {job.eta_seconds:.0f} s" if job.eta_seconds is not None else ""
            self.stdout.write(
                f"  {job.files_done + job.files_failed}/{job.files_total} files, {job.articles} articles, "
                f"{job.articles_per_second:.1f}/s{eta}"
            )
            if job.finished_at:
                return
            time.sleep(5)
