"""Fit the verifier's decision rule on the dev splits and store it beside the checkpoint (`decision.json`).

    manage.py fit_verifier_rule                                  # the configured checkpoint
    manage.py fit_verifier_rule --model var/models/verifier-v2 --target-precision 0.85 --min-coverage 0.4
    manage.py fit_verifier_rule --no-product-shaped            # the gold dev splits alone, as before
    manage.py fit_verifier_rule --product-shaped-half 0        # half 0 only: half 1 stays unseen, to be read

The dev pairs are read the way the product reads them (the evidence tagger picks the sentences), so the rule is
tuned on what it will see. Beside the gold dev splits it reads the product-shaped dev set (answer-like restatements of
dev abstracts, `verifier.product_dev`) as one more set: the gold pairs are all hard, the product's mostly are not, and
a threshold fitted on hard pairs alone hides most easy ones as Unclear. Only dev splits are used: the rule is never
chosen on a file it is scored on later.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from verifier.decision import fit_decision_rule
from verifier.evaluation_inputs import dev_logits, product_reading
from verifier.product_dev import half, product_dev_pairs
from webapp.corpus import engines


class Command(BaseCommand):
    help = "Fit temperature, label biases, the CONTRADICT floor and the Unclear threshold on the dev splits."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--model", type=Path, default=Path(settings.VERIMED.verification.verifier_model), help="checkpoint folder"
        )
        parser.add_argument("--evidence-sentences", type=int, default=3)
        parser.add_argument("--whole-abstract", action="store_true", help="The checkpoint reads whole abstracts.")
        parser.add_argument("--target-precision", type=float, default=0.85)
        parser.add_argument("--min-coverage", type=float, default=0.40)
        parser.add_argument(
            "--per-label-thresholds",
            action="store_true",
            help="An Unclear threshold per label, each fitted to the target precision on the pairs given that label.",
        )
        parser.add_argument(
            "--no-product-shaped",
            dest="product_shaped",
            action="store_false",
            help="Fit on the gold dev splits only.",
        )
        parser.add_argument(
            "--product-shaped-half",
            type=int,
            choices=(0, 1),
            help="Fit on this half of the product-shaped dev set (by source abstract), so that the other half can "
            "measure the rule (benchmarks/product_shaped_dev.py --refit reads half 1); default: all of it.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        from verifier.cross_encoder import CrossEncoderVerifier

        folder: Path = options["model"]
        if not (folder / "config.json").exists():
            raise CommandError(f"no checkpoint in {folder}")
        reading = product_reading(
            engines.embedder(),
            Path(settings.VERIMED.verification.evidence_model),
            evidence_sentences=options["evidence_sentences"],
            whole_abstract=options["whole_abstract"],
        )
        classifier = CrossEncoderVerifier.load(folder, precision=settings.VERIMED.verification.verifier_precision)
        data_root = settings.VERIMED.paths.data_dir
        dev = dev_logits(classifier, reading, data_root, write=self.stdout.write)
        if options["product_shaped"]:
            shaped = product_dev_pairs(data_root)
            if options["product_shaped_half"] is not None:
                shaped = half(shaped, options["product_shaped_half"])
            self.stdout.write(f"product_shaped: {len(shaped)} dev pairs; classifying…")
            inputs = reading.inputs([item.pair for item in shaped])
            dev["product_shaped"] = (classifier.logits(inputs), [item.label for item in shaped])
        rule = fit_decision_rule(
            dev,
            target_precision=options["target_precision"],
            min_coverage=options["min_coverage"],
            per_label_thresholds=options["per_label_thresholds"],
        )
        path = rule.save(folder)
        self.stdout.write(json.dumps({"rule": str(path), **rule.__dict__}, default=list, indent=2))
