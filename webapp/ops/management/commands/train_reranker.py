"""Train the reranker from the BioASQ golden sets, with hard negatives from our own search over the shared corpus.

    manage.py train_reranker                          # the committed weights (indexer/models/verimed-minilm-reranker)
    manage.py train_reranker --limit 50 --output var/models/reranker-smoke

Resumable: run the same command again after an interruption. The benchmark's questions never enter (see
`indexer.reranker_data`); measure the result with `manage.py evaluate retrieval`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from indexer.evaluation import evaluation_index_dir
from indexer.packaged_models import resolve_model_path
from indexer.reranker import DEFAULT_RERANKER
from indexer.reranker_training import RerankerTrainingConfig
from indexer.reranker_training_run import run_reranker_training
from webapp.corpus import engines

BENCHMARK_CORPUS = ("bioasq/benchmark/corpus.jsonl.gz", "bioasq/benchmark/distractors.jsonl.gz")


class Command(BaseCommand):
    help = "Fine-tune the retrieval reranker (a cross-encoder) on BioASQ golden snippets with mined hard negatives."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--backbone", default="minilm", help="minilm (packaged) or a HF model path or id")
        parser.add_argument("--output", type=Path, default=DEFAULT_RERANKER)
        parser.add_argument(
            "--corpus",
            type=Path,
            nargs="+",
            help="Where hard negatives are mined (default: the "
            "BioASQ benchmark corpus and its distractors in the data folder)",
        )
        parser.add_argument("--epochs", type=int, default=1)
        parser.add_argument("--learning-rate", type=float, default=4e-5)
        parser.add_argument("--groups-per-batch", type=int, default=16)
        parser.add_argument("--max-length", type=int, default=128)
        parser.add_argument("--limit", type=int, help="Use only this many training questions (a quick smoke run).")

    def handle(self, *args: Any, **options: Any) -> None:
        data_root: Path = settings.VERIMED.paths.data_dir
        if not data_root.is_dir():
            raise CommandError(f"data directory {data_root} not found (set VERIMED_DATA_DIR)")
        corpus = options["corpus"] or [data_root / name for name in BENCHMARK_CORPUS]
        missing = [str(path) for path in corpus if not path.exists()]
        if missing:
            raise CommandError(f"not found: {', '.join(missing)}")
        output: Path = options["output"]
        config = RerankerTrainingConfig(
            backbone=resolve_model_path(options["backbone"]),
            output=str(output),
            epochs=options["epochs"],
            learning_rate=options["learning_rate"],
            groups_per_batch=options["groups_per_batch"],
            max_length=options["max_length"],
        )
        summary = run_reranker_training(
            config,
            data_root,
            corpus=corpus,
            index_dir=evaluation_index_dir(settings.VAR_DIR / "eval", corpus),
            groups_file=settings.VAR_DIR / "reranker-training" / f"{output.name}-groups.jsonl",
            embedder=engines.embedder(),
            write=self.stdout.write,
            limit=options["limit"],
        )
        self.stdout.write(f"trained in {summary['training_seconds']} s; wrote {output}")
