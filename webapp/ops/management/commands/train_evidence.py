"""Rebuild the evidence tagger from the rationale sentences of the shared training splits.

    manage.py train_evidence                          # LateFusion: the committed tagger the product uses
    manage.py train_evidence --kind early_fusion      # EarlyFusion over the trained verifier's pair readings

The decision threshold is chosen on the dev splits' pairs that have rationales and saved with the weights.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from verifier.datasets import (
    DEV_SPLITS,
    POSITION_ARTIFACT_SPLITS,
    TRAIN_SPLITS,
    read_split,
    read_training_pairs,
)
from verifier.evidence_model import train_tagger
from verifier.evidence_training import early_fusion_examples, late_fusion_examples
from verifier.vectors import SentenceVectors
from webapp.corpus import engines


class Command(BaseCommand):
    help = "Train the sentence-level evidence tagger (LateFusion or EarlyFusion) and choose its threshold on dev."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--kind", choices=("late_fusion", "early_fusion"), default="late_fusion")
        parser.add_argument("--output", type=Path, help="default: the configured tagger (late) or var/models/…")
        parser.add_argument("--epochs", type=int, default=12)
        parser.add_argument("--limit", type=int, help="Use only this many training pairs (a quick smoke run).")

    def handle(self, *args: Any, **options: Any) -> None:
        data_root: Path = settings.VERIMED_DATA_DIR
        if not data_root.is_dir():
            raise CommandError(f"data directory {data_root} not found (set VERIMED_DATA_DIR)")
        kind = options["kind"]
        default_output = (
            settings.VERIMED_EVIDENCE_MODEL
            if kind == "late_fusion"
            else settings.VAR_DIR / "models" / "verimed-evidence-early-fusion"
        )
        output: Path = options["output"] or default_output
        # Splits whose rationale always sits at one position would teach (and reward) position, not evidence.
        excluded = POSITION_ARTIFACT_SPLITS
        train_pairs = read_training_pairs(data_root, limit=options["limit"], exclude=excluded)
        dev_pairs = [
            pair
            for split in DEV_SPLITS
            if split.name not in excluded
            for pair in read_split(data_root, split)
            if pair.rationale
        ]
        started = time.perf_counter()
        if kind == "late_fusion":
            vectors = SentenceVectors(engines.embedder())
            train = late_fusion_examples(train_pairs, vectors)
            dev = late_fusion_examples(dev_pairs, vectors)
        else:
            from verifier.cross_encoder import CrossEncoderVerifier

            encoder = CrossEncoderVerifier.load(settings.VERIMED_VERIFIER_MODEL, max_length=128, batch_size=64)
            train = early_fusion_examples(train_pairs, encoder)
            dev = early_fusion_examples(dev_pairs, encoder)
        features_seconds = time.perf_counter() - started
        self.stdout.write(f"{len(train):,} training and {len(dev):,} dev pairs featurised in {features_seconds:.0f} s")
        tagger, history = train_tagger(train, dev, kind=kind, epochs=options["epochs"])
        tagger.save(
            output,
            train_pairs=len(train),
            dev_pairs=len(dev),
            history=history,
            train_splits=[split.name for split in TRAIN_SPLITS if split.name not in excluded],
            features_seconds=round(features_seconds),
        )
        self.stdout.write(json.dumps(history[-3:]))
        self.stdout.write(self.style.SUCCESS(f"{kind} tagger, threshold {tagger.threshold}, saved in {output}"))
