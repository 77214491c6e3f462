"""Rebuild the evidence tagger from the rationale sentences of the shared training splits.

    manage.py train_evidence                          # LateFusion: the committed tagger the product uses
    manage.py train_evidence --kind early_fusion      # EarlyFusion over the trained verifier's pair readings
    manage.py train_evidence --product-shaped-pairs 12000 --output var/models/tagger   # plus answer-like pairs

The decision threshold is chosen on the dev splits' pairs that have rationales and saved with the weights.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from verifier.evidence_training import run_tagger_training
from webapp.corpus import engines


class Command(BaseCommand):
    help = "Train the sentence-level evidence tagger (LateFusion or EarlyFusion) and choose its threshold on dev."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--kind", choices=("late_fusion", "early_fusion"), default="late_fusion")
        parser.add_argument("--output", type=Path, help="default: the configured tagger (late) or var/models/…")
        parser.add_argument("--epochs", type=int, default=12)
        parser.add_argument("--limit", type=int, help="Use only this many training pairs (a quick smoke run).")
        parser.add_argument(
            "--product-shaped-pairs",
            type=int,
            default=0,
            help="Also this many answer-like pairs made from training abstracts (verifier.product_pairs).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        data_root: Path = settings.VERIMED.paths.data_dir
        if not data_root.is_dir():
            raise CommandError(f"data directory {data_root} not found (set VERIMED_DATA_DIR)")
        kind = options["kind"]
        default_output = (
            Path(settings.VERIMED.verification.evidence_model)
            if kind == "late_fusion"
            else settings.VAR_DIR / "models" / "verimed-evidence-early-fusion"
        )
        output: Path = options["output"] or default_output
        tagger = run_tagger_training(
            kind,
            data_root,
            output,
            embedder=engines.embedder(),
            verifier_model=Path(settings.VERIMED.verification.verifier_model),
            epochs=options["epochs"],
            limit=options["limit"],
            write=self.stdout.write,
            product_shaped_pairs=options["product_shaped_pairs"],
        )
        self.stdout.write(self.style.SUCCESS(f"{kind} tagger, threshold {tagger.threshold}, saved in {output}"))
