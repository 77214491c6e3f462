"""Rebuild the shipped claim verifier from the shared training splits.

    manage.py train_verifier                      # MiniLM, evidence input, 3 epochs: the committed weights
    manage.py train_verifier --input abstract --output var/models/verifier-abstract

Selects the epoch on the dev splits and writes fp16 safetensors plus training.json (config, dev history).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from indexer.embedder import resolve_model_path
from verifier.datasets import DEV_SPLITS, TRAIN_SPLITS, ClaimDocumentPair, read_split, read_training_pairs
from verifier.extra_training import (
    bioasq_pairs,
    counterfactual_pairs,
    dev_question_ids,
    label_counts,
    pubmedqa_pairs,
)
from verifier.training import TrainingConfig, build_examples, gold_free_examples, train_verifier
from verifier.vectors import SentenceVectors
from webapp.corpus import engines


class Command(BaseCommand):
    help = "Fine-tune the 3-way claim verifier (cross-encoder) on the shared training splits."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--backbone", default="minilm", help="minilm (packaged) or a HF model path or id")
        parser.add_argument("--output", type=Path, default=settings.VERIMED_VERIFIER_MODEL)
        parser.add_argument("--input", dest="input_mode", choices=("evidence", "abstract"), default="evidence")
        parser.add_argument("--evidence-sentences", type=int, default=3)
        parser.add_argument("--epochs", type=int, default=3)
        parser.add_argument("--learning-rate", type=float, default=4e-5)
        parser.add_argument("--batch-size", type=int, default=16)
        parser.add_argument("--max-length", type=int, default=None, help="tokens (default 192 evidence, 256 abstract)")
        parser.add_argument(
            "--hard-negatives",
            type=float,
            default=0.35,
            help="Share of rationale pairs that also give a NO_EVIDENCE one.",
        )
        parser.add_argument("--limit", type=int, help="Use only this many training pairs (a quick smoke run).")
        parser.add_argument(
            "--extra",
            default="bioasq,pubmedqa",
            help="Comma-separated extra sources: bioasq (yes/no questions with snippets, dev questions excluded), "
            "pubmedqa (PQA-L yes/no outside the test ids); empty for none.",
        )
        parser.add_argument(
            "--counterfactuals",
            type=float,
            default=0.5,
            help="Share of SUPPORT pairs that also give an edited claim as CONTRADICT (0 for none).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        data_root: Path = settings.VERIMED_DATA_DIR
        if not data_root.is_dir():
            raise CommandError(f"data directory {data_root} not found (set VERIMED_DATA_DIR)")
        input_mode = options["input_mode"]
        config = TrainingConfig(
            backbone=resolve_model_path(options["backbone"]),
            output=str(options["output"]),
            input_mode=input_mode,
            evidence_sentences=options["evidence_sentences"],
            hard_negative_fraction=options["hard_negatives"],
            epochs=options["epochs"],
            learning_rate=options["learning_rate"],
            batch_size=options["batch_size"],
            max_length=options["max_length"] or (192 if input_mode == "evidence" else 256),
            threads=settings.VERIMED_TORCH_THREADS,
            train_splits=[split.name for split in TRAIN_SPLITS],
            dev_splits=[split.name for split in DEV_SPLITS],
            extra_data=[name.strip() for name in options["extra"].split(",") if name.strip()],
            counterfactual_fraction=options["counterfactuals"],
        )
        train_pairs = read_training_pairs(data_root, limit=options["limit"])
        train_pairs += extra_pairs(data_root, config.extra_data)
        made = counterfactual_pairs(train_pairs, fraction=config.counterfactual_fraction, seed=config.seed)
        self.stdout.write(
            f"{len(train_pairs):,} training pairs {label_counts(train_pairs)}; {len(made):,} counterfactual"
        )
        train_pairs += made
        dev_pairs = {split.name: read_split(data_root, split) for split in DEV_SPLITS}
        vectors = None
        if input_mode == "evidence":
            vectors = SentenceVectors(engines.embedder())
            self.stdout.write("embedding claims and sentences for evidence selection…")
            vectors.add_pairs(train_pairs)
            for pairs in dev_pairs.values():
                vectors.add_pairs(pairs)
        train = build_examples(
            train_pairs,
            vectors,
            input_mode=input_mode,
            evidence_sentences=config.evidence_sentences,
            hard_negative_fraction=config.hard_negative_fraction,
            seed=config.seed,
        )
        k = config.evidence_sentences
        choose = None if vectors is None else (lambda pair: vectors.ranked(pair.claim, pair.document.sentences)[:k])
        dev = {name: gold_free_examples(pairs, choose) for name, pairs in dev_pairs.items()}
        self.stdout.write(
            f"training on {len(train):,} examples; dev: " + ", ".join(f"{n} {len(e)}" for n, e in dev.items())
        )
        summary = train_verifier(config, train, dev, on_progress=self.stdout.write)
        self.stdout.write(self.style.SUCCESS(f"best epoch {summary['best_epoch']}; weights in {config.output}"))


def extra_pairs(data_root: Path, names: list[str]) -> list[ClaimDocumentPair]:
    pairs: list[ClaimDocumentPair] = []
    for name in names:
        if name == "bioasq":
            pairs += bioasq_pairs(data_root, exclude_ids=dev_question_ids(data_root))
        elif name == "pubmedqa":
            pairs += pubmedqa_pairs(data_root)
        else:
            raise CommandError(f"unknown extra training source {name!r} (bioasq, pubmedqa)")
    return pairs
