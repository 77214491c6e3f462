"""`manage.py rebuild_index`: rebuild both indexes from the database into a new generation, then switch to it.

The site and the worker keep answering from the current generation until the switch. Run it after changing the
embedding model, the chunking or an engine's schema.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from indexer.errors import IndexerError
from webapp.corpus.models import Article
from webapp.corpus.services.rebuild import index_rebuild


class Command(BaseCommand):
    help = "Rebuild the lexical and vector indexes from the article table without downtime."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--batch-size", type=int, default=256)
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        bar: tqdm[Any] = tqdm(
            total=Article.objects.count(), unit="abstract", disable=options["no_progress"], desc="rebuild"
        )

        def progress(count: int) -> None:
            bar.update(count)

        try:
            report = index_rebuild(batch_size=options["batch_size"], on_progress=progress)
        except IndexerError as exc:
            raise CommandError(str(exc)) from exc
        finally:
            bar.close()
        self.stdout.write(
            f"generation {report.generation} is live (was {report.previous}): {report.articles} articles, "
            f"{report.chunks} chunks in {report.seconds:.1f} s"
        )
