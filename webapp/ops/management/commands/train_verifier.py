"""Rebuild the shipped claim verifier from the shared training splits.

    manage.py train_verifier                      # MiniLM, evidence input, 3 epochs: the committed weights
    manage.py train_verifier --input abstract --output var/models/verifier-abstract
    manage.py train_verifier --backbone mpnet --max-length 128 --precision bf16 --eval-every 100 --stop-after 3200
    manage.py train_verifier --extra bioasq,pubmedqa --extra flags.jsonl   # plus reviewers' flags (export_flags)
    manage.py train_verifier --backbone verifier/models/verimed-mpnet-verifier --extra bioasq,pubmedqa,product-shaped \
        --product-shaped-pairs 4800 --gold-examples 4800 --epochs 1 --max-length 128   # warm start on answer-like pairs
    manage.py train_verifier --backbone verifier/models/verimed-minilm-verifier \
        --teacher verifier/models/verimed-mpnet-verifier --transfer bioasq-answers   # distil mpnet into MiniLM

A run keeps a resume point in its output folder every few steps: the same command again goes on where a killed or
gated (`--stop-after`) run stopped.

Selects the epoch on the dev splits and writes fp16 safetensors plus training.json (config, dev history).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from indexer.packaged_models import PACKAGED, resolve_model_path
from verifier.datasets import DEV_SPLITS, TRAIN_SPLITS, DatasetFormatError
from verifier.precision import CHOICES
from verifier.reviewed_flags import read_reviewed_file
from verifier.training import TrainingConfig
from verifier.training_run import EXTRA_SOURCES, TRANSFER_SOURCES, run_verifier_training
from webapp.corpus import engines

EXTRA_DEFAULT = ["bioasq,pubmedqa"]


class Command(BaseCommand):
    help = "Fine-tune the 3-way claim verifier (cross-encoder) on the shared training splits."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--backbone", default="minilm", help=f"{' or '.join(PACKAGED)} (packaged) or a HF model path or id"
        )
        parser.add_argument("--output", type=Path, default=Path(settings.VERIMED.verification.verifier_model))
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
        parser.add_argument("--precision", choices=CHOICES, default="fp32", help="bf16: autocast (AVX512-BF16)")
        parser.add_argument("--eval-every", type=int, default=0, help="Steps between dev evaluations (a curve).")
        parser.add_argument(
            "--stop-after", type=int, default=0, help="Stop after this many examples (an early gate); resumable."
        )
        parser.add_argument("--limit", type=int, help="Use only this many training pairs (a quick smoke run).")
        parser.add_argument(
            "--seed",
            type=int,
            default=13,
            help="Shuffling and counterfactual draws; a further epoch from a checkpoint takes a new one.",
        )
        parser.add_argument(
            "--extra",
            action="append",
            help="Extra sources, comma-separated or repeated (default bioasq,pubmedqa; giving any replaces it): "
            "bioasq (yes/no questions with snippets, dev and benchmark questions excluded), pubmedqa (PQA-L yes/no "
            "outside the test ids), product-shaped (answer-like restatements of training abstracts), or a file of "
            "reviewers' flags from `export_flags --output` (dev claims, dev and benchmark questions and duplicates "
            "dropped); empty for none.",
        )
        parser.add_argument(
            "--teacher",
            default="",
            help="A verifier checkpoint whose soft labels the student learns (distillation; verifier.distillation).",
        )
        parser.add_argument(
            "--transfer",
            default="bioasq-answers",
            help=f"Unlabelled pairs the teacher labels too, comma-separated ({', '.join(TRANSFER_SOURCES)}; "
            "empty for none); only with --teacher.",
        )
        parser.add_argument("--distill-alpha", type=float, default=0.5, help="Weight of the gold label on gold pairs.")
        parser.add_argument("--distill-temperature", type=float, default=2.0, help="Softens the teacher's labels.")
        parser.add_argument(
            "--product-shaped-pairs",
            type=int,
            default=0,
            help="With --extra product-shaped: this many of its pairs, a third per label (0: all).",
        )
        parser.add_argument(
            "--gold-examples",
            type=int,
            default=0,
            help="Train on a seeded sample of this many of the other examples (0: all); for a warm start that must "
            "fit a session.",
        )
        parser.add_argument(
            "--trainable-layers",
            type=int,
            default=0,
            help="Train only the encoder's top N layers and the head (0: all); a warm start then ships as an overlay.",
        )
        parser.add_argument(
            "--counterfactuals",
            type=float,
            default=0.5,
            help="Share of SUPPORT pairs that also give an edited claim as CONTRADICT (0 for none).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        data_root: Path = settings.VERIMED.paths.data_dir
        if not data_root.is_dir():
            raise CommandError(f"data directory {data_root} not found (set VERIMED_DATA_DIR)")
        input_mode = options["input_mode"]
        extra = [name.strip() for value in options["extra"] or EXTRA_DEFAULT for name in value.split(",")]
        extra = [name for name in extra if name]
        for name in extra:
            if name in EXTRA_SOURCES:
                continue
            if not Path(name).is_file():
                raise CommandError(
                    f"unknown extra training source {name!r} ({', '.join(EXTRA_SOURCES)} or an export_flags file)"
                )
            try:  # a bad row stops the command here, before any model loads
                read_reviewed_file(Path(name))
            except DatasetFormatError as error:
                raise CommandError(str(error)) from None
        teacher = resolve_model_path(options["teacher"]) if options["teacher"] else ""
        transfer = [name.strip() for name in options["transfer"].split(",") if name.strip()] if teacher else []
        unknown = [name for name in transfer if name not in TRANSFER_SOURCES]
        if unknown:
            raise CommandError(f"unknown transfer source {unknown[0]!r} ({', '.join(TRANSFER_SOURCES)})")
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
            threads=settings.VERIMED.engines.torch_threads,
            train_splits=[split.name for split in TRAIN_SPLITS],
            dev_splits=[split.name for split in DEV_SPLITS],
            extra_data=extra,
            counterfactual_fraction=options["counterfactuals"],
            product_shaped_pairs=options["product_shaped_pairs"],
            gold_examples=options["gold_examples"],
            trainable_layers=options["trainable_layers"],
            precision=options["precision"],
            seed=options["seed"],
            teacher=teacher,
            distill_alpha=options["distill_alpha"],
            distill_temperature=options["distill_temperature"],
            transfer_data=transfer,
        )
        summary = run_verifier_training(
            config,
            data_root,
            embedder=engines.embedder(),
            limit=options["limit"],
            write=self.stdout.write,
            stop_after_examples=options["stop_after"],
            eval_every=options["eval_every"],
        )
        self.stdout.write(self.style.SUCCESS(f"best epoch {summary['best_epoch']}; weights in {config.output}"))
