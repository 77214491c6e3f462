"""`manage.py embed_pending`: embed the articles stored but not yet in the vector index.

By default it writes them into the vector index itself, with one bar per stage, and stops when none is left; the
embedded index must then be free (the stack stopped). With `--follow`, as the stack runs it, it never opens the vector
index: at the lowest CPU priority it leaves batches for the worker to write in between questions
(webapp/corpus/services/background_embedding.py), reports its progress for the index status page, and keeps watching
for articles stored later.

It lives with the stack's other commands, not in the corpus app: giving way to questions reads the question queue,
and the corpus never reads the apps built on it (the layers contract in pyproject.toml).
"""

from __future__ import annotations

import os
import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from indexer.embedding_handoff import discard_partial_batches, waiting_batches
from indexer.errors import IndexerError
from indexer.ingest import PROGRESS_STAGES, IngestReport, embed_pending
from webapp.corpus import engines
from webapp.corpus.progress_bars import StageBars
from webapp.corpus.services.articles import DatabaseArticleSink
from webapp.corpus.services.background_embedding import (
    chunker_for,
    embed_next_batch,
    inbox_folder,
    report_progress,
)
from webapp.ops.stack import EMBEDDER_READY_LINE
from webapp.qa.queue import model_work_being_done

# How often a paused embedder looks whether the questions are done.
QUESTION_CHECK_SECONDS = 1.0


class Command(BaseCommand):
    help = "Embed the articles not yet in the vector index (--follow: in the background, beside a running worker)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--batch-size", type=int, help="Articles per batch (default 128; 32 with --follow, to give way quickly)."
        )
        parser.add_argument("--no-progress", action="store_true", help="Do not draw progress bars.")
        parser.add_argument(
            "--follow",
            action="store_true",
            help="Run in the background beside the worker: hand batches to it, keep watching for new articles.",
        )
        parser.add_argument(
            "--max-waiting-batches",
            type=int,
            default=4,
            help="With --follow: pause while this many batches wait for the worker (a stopped worker takes none).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["follow"]:
            self._follow(batch_size=options["batch_size"] or 32, max_waiting=options["max_waiting_batches"])
            return
        sink = DatabaseArticleSink()
        pending = sink.pending_count()
        bars = StageBars(store_total=0, stages=PROGRESS_STAGES[1:], disable=options["no_progress"])
        for stage in PROGRESS_STAGES[1:]:
            bars.stage_started(stage, pending)
        vectors = engines.vector_index()
        try:
            report = embed_pending(
                sink=sink,
                vectors=vectors,
                embedder=engines.embedder(),
                batch_size=options["batch_size"] or 128,
                progress=bars,
            )
            if report.embedded:
                vectors.optimize()
        except IndexerError as exc:
            raise CommandError(
                f"{exc}. While the stack runs, its background embedder embeds pending articles by itself."
            ) from exc
        finally:
            bars.close()
            engines.release_engines()
        self.stdout.write(f"embedded {report.embedded} articles into {report.chunks} chunks")

    def _follow(self, *, batch_size: int, max_waiting: int) -> None:
        from webapp.corpus.tasks import vectors_apply_waiting_task

        # Questions first: the LLM server and the worker get the CPU whenever they want it.
        os.nice(19)
        poll = settings.VERIMED.engines.background_embedding_poll_seconds
        discard_partial_batches(inbox_folder())  # an earlier embedder killed mid-write; one embedder runs at a time
        if waiting_batches(inbox_folder()):
            vectors_apply_waiting_task.delay()  # batches an earlier run left: the worker writes them in first
        self.stdout.write(EMBEDDER_READY_LINE)
        self.stdout.flush()
        report = IngestReport()
        embedding_seconds = 0.0
        embedder = None
        while True:
            # Questions first, and not only by CPU priority: on two cores a nice-19 embedder still slowed the LLM
            # server's prompt reading about fourfold (20 tokens/s against 90 and more), so it waits while any
            # question (or deep check, on the same LLM server) is queued or running, and embeds in small batches to
            # be quick to give way.
            if model_work_being_done():
                report_progress(
                    state="paused while questions or deep checks run", rate=_rate(report, embedding_seconds)
                )
                time.sleep(QUESTION_CHECK_SECONDS)
                continue
            if len(waiting_batches(inbox_folder())) >= max_waiting:
                report_progress(state="waiting for the worker", rate=_rate(report, embedding_seconds))
                time.sleep(poll)
                continue
            if embedder is None and DatabaseArticleSink().pending_count():
                embedder = engines.embedder()  # loaded only once there is work: an idle embedder costs no memory
            started = time.perf_counter()
            done = (
                embed_next_batch(embedder=embedder, chunker=chunker_for(embedder), limit=batch_size, report=report)
                if embedder is not None
                else 0
            )
            if done:
                embedding_seconds += time.perf_counter() - started
                vectors_apply_waiting_task.delay()
                progress = report_progress(state="embedding", rate=_rate(report, embedding_seconds))
                eta = progress.eta_seconds
                self.stdout.write(
                    f"embedded {progress.embedded + progress.waiting} of {progress.articles} articles "
                    f"({progress.waiting} waiting for the worker), {progress.rate or 0.0:.1f} articles/s, "
                    f"{'unknown' if eta is None else f'{eta / 60:.0f} min'} left"
                )
                self.stdout.flush()
                continue
            state = "waiting for the worker" if waiting_batches(inbox_folder()) else "idle"
            report_progress(state=state, rate=_rate(report, embedding_seconds))
            time.sleep(poll)


def _rate(report: IngestReport, seconds: float) -> float | None:
    return report.embedded / seconds if seconds > 0 else None
