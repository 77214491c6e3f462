"""Fit the bottom line rule on dev questions and store it beside the verifier checkpoint (`bottom_line.json`).

    manage.py fit_bottom_line --pubmedqa ../shared/data/pubmedqa/ori_pqal.json \\
        --bioasq ../shared/data/bioasq/benchmark/questions_dev.jsonl \\
        --corpus ../shared/data/bioasq/benchmark/corpus.jsonl.gz ../shared/data/bioasq/benchmark/distractors.jsonl.gz \\
        --pubmedqa-extra ../shared/data/pubmedqa/pubmedqa_subset_intelligence_inlpt.csv

Dev questions only: BioASQ's yes/no questions of the file given (the benchmark's dev split), PQA-L's items outside
the official test ids that the verifier never trained on, and with --pubmedqa-extra the yes/no items of a
PubMedQA-style CSV outside PQA-L (`../shared/data/pubmedqa/pubmedqa_subset_intelligence_inlpt.csv`). The PubMedQA
test split is never read here, so `evaluate answers` scores it with a rule that was not chosen on it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from generator.model_files import MODELS, ModelFileError
from indexer.hybrid import HybridSettings
from verifier.bottom_line_fit import fit_rule_on_dev
from webapp.corpus import engines
from webapp.ops.management.commands.evaluate import (
    answer_sets,
    answers_index_root,
    pipeline_with_verifier,
    run_model,
)
from webapp.qa.verification import answer_verifier


class Command(BaseCommand):
    help = "Fit the bottom line's rule (vote weights and thresholds) on dev questions; writes bottom_line.json."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--model", type=Path, default=Path(settings.VERIMED.verification.verifier_model), help="checkpoint folder"
        )
        parser.add_argument("--pubmedqa", type=Path, help="PQA-L ori_pqal.json (its non-test items are dev)")
        parser.add_argument("--pubmedqa-ids", type=Path, help="PQA-L test ids, kept out of the fit")
        parser.add_argument("--bioasq", type=Path, help="BioASQ dev questions (the benchmark's questions_dev.jsonl)")
        parser.add_argument("--corpus", type=Path, nargs="+", default=[], help="The benchmark corpus files.")
        parser.add_argument(
            "--pubmedqa-extra",
            type=Path,
            help="PubMedQA-style yes/no items outside PQA-L (CSV in PubMedQA's columns): more dev questions.",
        )
        parser.add_argument(
            "--with-model-reading",
            action="store_true",
            help="Also have the answer LLM read each question's closest abstract, and offer its reading a weight.",
        )
        parser.add_argument(
            "--serve",
            choices=sorted(MODELS),
            help="With --with-model-reading: serve this model with llama.cpp.",
        )
        parser.add_argument("--json", type=Path, help="Also write the fit's report here.")

    def handle(self, *args: Any, **options: Any) -> None:
        folder: Path = options["model"]
        if not (folder / "config.json").exists():
            raise CommandError(f"no checkpoint in {folder}")
        pipeline = pipeline_with_verifier(str(folder))
        try:
            rule, report = fit_rule_on_dev(
                answer_sets(options),
                index_root=answers_index_root(),
                embedder=engines.embedder(),
                retrieval=HybridSettings(),
                verifier=answer_verifier(pipeline),
                write=self.stdout.write,
                model=run_model(options, pipeline, answer_limit=0) if options["with_model_reading"] else None,
            )
        except (ValueError, ModelFileError) as exc:
            raise CommandError(str(exc)) from exc
        path = rule.save(folder)
        self.stdout.write(json.dumps({"rule_file": str(path), **report}, indent=2))
        if out := options["json"]:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(report, indent=2))
