"""`manage.py ingest PATH...`: load PubMed XML or JSONL files into the database and both indexes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from indexer.errors import IndexerError
from indexer.ingest import STAGES, estimate_records, ingest_paths
from indexer.readers import expand_paths
from webapp.corpus import engines
from webapp.corpus.services.articles import DatabaseArticleSink


class Command(BaseCommand):
    help = "Ingest PubMed XML (.xml, .xml.gz) or JSONL (.jsonl, .jsonl.gz) files or folders of them."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", type=Path)
        parser.add_argument("--batch-size", type=int, default=256)
        parser.add_argument("--no-progress", action="store_true", help="Do not draw a progress bar.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            paths = expand_paths(options["paths"])
        except FileNotFoundError as exc:
            raise CommandError(str(exc)) from exc
        total = sum(estimate_records(path) for path in paths)
        # Two bars, each with its own rate and ETA: storing is fast, embedding is most of the time (on a 2-core
        # machine 5 to 14 abstracts/s against hundreds), and one bar for both stood still while embedding ran.
        stored = tqdm(total=total, unit="abstract", disable=options["no_progress"], desc="store", position=0)
        embedded = tqdm(total=total, unit="abstract", disable=options["no_progress"], desc="embed", position=1)

        def on_stored(count: int) -> None:
            stored.update(count)

        def on_embedded(count: int) -> None:
            embedded.update(count)

        try:
            report = ingest_paths(
                paths,
                sink=DatabaseArticleSink(),
                lexical=engines.lexical_index(),
                vectors=engines.vector_index(),
                embedder=engines.embedder(),
                batch_size=options["batch_size"],
                on_progress=on_stored,
                on_embedded=on_embedded,
            )
        except IndexerError as exc:
            raise CommandError(str(exc)) from exc
        finally:
            stored.close()
            embedded.close()
            engines.release_engines()
        self.stdout.write(
            f"files={report.files} articles={report.articles} "
            f"skipped_without_abstract={report.skipped_without_abstract} deleted={report.deleted}"
        )
        for stage in STAGES:
            self.stdout.write(f"  {stage:<9} {report.seconds[stage]:8.1f} s  {report.rate(stage):10.1f} abstracts/s")
