"""`manage.py ingest_demo`: ingest the demo corpus from the shared data folder when the index is empty.

By default it stores the articles and indexes their words only (a minute or two): embedding them takes half an hour
and more on two cores, and the stack's background embedder does it while the site already answers from the lexical
index (`make run`). `--embed` embeds them here and now, for a machine that runs no stack.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from webapp.corpus import engines
from webapp.corpus.models import Article

# About 13k abstracts: the PubMed XML excerpts, the BioASQ benchmark corpus and its distractors.
DEMO_FILES = (
    "pubmed/xml",
    "bioasq/benchmark/corpus.jsonl.gz",
    "bioasq/benchmark/distractors.jsonl.gz",
)


def demo_paths(data_dir: Path) -> list[Path]:
    return [data_dir / name for name in DEMO_FILES]


class Command(BaseCommand):
    help = "Ingest the demo corpus (VERIMED_DATA_DIR) unless the database and the index already hold articles."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--embed", action="store_true", help="Embed the articles too, instead of leaving that to the stack."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        indexed = engines.lexical_index().count()
        stored = Article.objects.count()
        if indexed and stored:
            self.stdout.write(f"index holds {indexed} documents and the database {stored} articles: nothing to do")
            return
        if stored and not indexed:
            # Articles from an earlier version whose index layout changed: rebuild from the database, no re-parsing.
            self.stdout.write(f"the database holds {stored} articles but the index is empty: rebuilding it")
            call_command("rebuild_index", "--no-progress")
            return
        paths = demo_paths(settings.VERIMED.paths.data_dir)
        missing = [str(path) for path in paths if not path.exists()]
        if missing:
            raise CommandError(
                f"demo data not found: {', '.join(missing)}. Set VERIMED_DATA_DIR to the shared data folder."
            )
        call_command("ingest", *map(str, paths), *([] if options["embed"] else ["--defer-embedding"]))
        # The embedding model's one-time ONNX export (about half a minute) is made here, before the stack starts:
        # otherwise the worker's first question and the background embedder would each wait for (and race on) it.
        self.stdout.write("preparing the embedding model…")
        engines.embedder().embed(["warm-up"])
