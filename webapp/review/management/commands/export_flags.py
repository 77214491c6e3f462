"""`manage.py export_flags --output FILE` (and/or `--claims FILE --corpus FILE`): closed, labelled flags as verifier
training data. `--output` writes the file `train_verifier --extra FILE` reads; the pair is the SciFact format."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from webapp.review.exports import flag_export_write


class Command(BaseCommand):
    help = (
        "Write the reviewers' labelled flags as a training file for `train_verifier --extra` (--output) and/or as "
        "SciFact-format claims and corpus JSONL files (--claims with --corpus)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--output", type=Path, help="training JSONL file to write (train_verifier --extra)")
        parser.add_argument("--claims", type=Path, help="SciFact claims JSONL file to write")
        parser.add_argument("--corpus", type=Path, help="SciFact corpus JSONL file to write")

    def handle(self, *args: Any, **options: Any) -> None:
        output: Path | None = options["output"]
        claims: Path | None = options["claims"]
        corpus: Path | None = options["corpus"]
        if (claims is None) != (corpus is None):
            raise CommandError("--claims and --corpus go together")
        if output is None and claims is None:
            raise CommandError("give --output FILE, or --claims FILE --corpus FILE, or both")
        for path in (output, claims, corpus):
            if path is not None and not path.parent.is_dir():
                raise CommandError(f"{path.parent} is not a folder")
        export = flag_export_write(output_path=output, claims_path=claims, corpus_path=corpus)
        if output is not None:
            self.stdout.write(f"{len(export.rows)} training rows to {output}")
        if claims is not None:
            self.stdout.write(f"{len(export.claims)} claims to {claims}, {len(export.corpus)} abstracts to {corpus}")
