"""`manage.py export_flags --claims FILE --corpus FILE`: closed, labelled flags as verifier training data."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from webapp.review.exports import flag_export_write


class Command(BaseCommand):
    help = "Write the reviewers' labelled flags as SciFact-format claims and corpus JSONL files."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--claims", type=Path, required=True, help="claims JSONL file to write")
        parser.add_argument("--corpus", type=Path, required=True, help="corpus JSONL file to write")

    def handle(self, *args: Any, **options: Any) -> None:
        claims: Path = options["claims"]
        corpus: Path = options["corpus"]
        for path in (claims, corpus):
            if not path.parent.is_dir():
                raise CommandError(f"{path.parent} is not a folder")
        export = flag_export_write(claims_path=claims, corpus_path=corpus)
        self.stdout.write(f"{len(export.claims)} claims to {claims}, {len(export.corpus)} abstracts to {corpus}")
