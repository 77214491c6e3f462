"""`manage.py ingest PATH...`: load PubMed XML or JSONL files into the database and both indexes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from indexer.errors import IndexerError
from indexer.ingest import PROGRESS_STAGES, STAGES, estimate_records, ingest_paths
from indexer.readers import expand_paths
from webapp.corpus import engines
from webapp.corpus.progress_bars import StageBars
from webapp.corpus.services.articles import DatabaseArticleSink


class Command(BaseCommand):
    help = "Ingest PubMed XML (.xml, .xml.gz) or JSONL (.jsonl, .jsonl.gz) files or folders of them."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", type=Path)
        parser.add_argument("--batch-size", type=int, default=256)
        parser.add_argument("--no-progress", action="store_true", help="Do not draw progress bars.")
        parser.add_argument(
            "--defer-embedding",
            action="store_true",
            help="Store the articles and index their words only; leave them pending for the background embedder "
            "(`make run` starts one) or a later `manage.py embed_pending`.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            paths = expand_paths(options["paths"])
        except FileNotFoundError as exc:
            raise CommandError(str(exc)) from exc
        deferred = options["defer_embedding"]
        bars = StageBars(
            store_total=sum(estimate_records(path) for path in paths),
            stages=PROGRESS_STAGES[:1] if deferred else PROGRESS_STAGES,
            disable=options["no_progress"],
        )
        try:
            report = ingest_paths(
                paths,
                sink=DatabaseArticleSink(),
                lexical=engines.lexical_index(),
                vectors=engines.vector_index(),
                embedder=engines.embedder(),
                batch_size=options["batch_size"],
                progress=bars,
                defer_embedding=deferred,
            )
        except IndexerError as exc:
            raise CommandError(str(exc)) from exc
        finally:
            bars.close()
            engines.release_engines()
        self.stdout.write(
            f"files={report.files} articles={report.articles} "
            f"skipped_without_abstract={report.skipped_without_abstract} deleted={report.deleted}"
        )
        for stage in STAGES:
            self.stdout.write(f"  {stage:<9} {report.seconds[stage]:8.1f} s  {report.rate(stage):10.1f} abstracts/s")
        if deferred:
            pending = DatabaseArticleSink().pending_count()
            self.stdout.write(
                f"{pending} articles wait to be embedded: the stack's background embedder does it (`make run`), "
                "or run `manage.py embed_pending`"
            )
