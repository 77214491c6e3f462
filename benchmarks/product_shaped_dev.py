"""Verifier checkpoints side by side on the product-shaped dev set and the four gold dev splits, read the product's way.

    .venv/bin/python benchmarks/product_shaped_dev.py \
        --model verifier/models/verimed-mpnet-verifier --model verifier/models/verimed-minilm-verifier
    .venv/bin/python benchmarks/product_shaped_dev.py --model var/models/new --refit   # also a rule fitted on half 0

Every pair is read as the product reads it: the evidence tagger picks the title + top 3 sentences, the checkpoint
reads them at the product's max_length and precision, and its own decision rule (`decision.json`) decides, Unclear
included. Per construction of the product-shaped set (`verifier.product_dev`): the share shown with its expected
label ("shown recall") and the share whose leaning is that label, Unclear or not ("leaning recall"). Per gold split:
macro-F1 of the rule's label and the shown share and precision.

`--refit` also fits a decision rule per checkpoint as `manage.py fit_verifier_rule --product-shaped-half 0` does (the
three gold dev splits plus half 0 of the product-shaped set, by source abstract) and reads half 1 with it: the half-1
figures and HealthVer's raw dev CSV are not fitted on, the other gold ones are. Logits are kept
under var/benchmarks/product-shaped/ per checkpoint and input digest, so a second run only refits. Prints a table and
writes JSON.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")

import django

django.setup()

import numpy as np  # noqa: E402
from django.conf import settings  # noqa: E402

from verifier.datasets import DEV_SPLITS, ClaimDocumentPair, read_healthver_csv, read_split  # noqa: E402
from verifier.decision import DecisionRule, fit_decision_rule  # noqa: E402
from verifier.evaluation_inputs import product_reading  # noqa: E402
from verifier.metrics import classification_report  # noqa: E402
from verifier.product_dev import half, product_dev_pairs  # noqa: E402
from verifier.product_pairs import CONSTRUCTIONS, ShapedPair  # noqa: E402
from verifier.verdicts import UNCLEAR  # noqa: E402
from webapp.corpus import engines  # noqa: E402

CACHE = Path("var/benchmarks/product-shaped")
HEALTHVER_CSV = "healthver/healthver_dev.csv"


def gold_dev(data_root: Path) -> dict[str, list[ClaimDocumentPair]]:
    splits = {split.name: read_split(data_root, split) for split in DEV_SPLITS}
    splits["healthver_csv"] = read_healthver_csv(data_root / HEALTHVER_CSV)
    return splits


def construction_report(rule: DecisionRule, logits: np.ndarray, shaped: Sequence[ShapedPair]) -> dict[str, Any]:
    decisions = rule.decide(logits) if len(logits) else []
    report: dict[str, Any] = {}
    for construction, expected in CONSTRUCTIONS.items():
        rows = [d for d, pair in zip(decisions, shaped, strict=True) if pair.construction == construction]
        if not rows:
            continue
        report[construction] = {
            "n": len(rows),
            "expected": expected,
            "shown_recall": round(sum(d.shown == expected for d in rows) / len(rows), 4),
            "leaning_recall": round(sum(d.label == expected for d in rows) / len(rows), 4),
            "unclear": round(sum(d.shown == UNCLEAR for d in rows) / len(rows), 4),
        }
    gold = [pair.label for pair in shaped]
    report["all"] = {
        "n": len(shaped),
        "macro_f1": classification_report(gold, [d.label for d in decisions])["macro_f1"],
        "unclear": round(sum(d.shown == UNCLEAR for d in decisions) / max(1, len(decisions)), 4),
    }
    return report


def gold_report(rule: DecisionRule, logits: np.ndarray, labels: Sequence[str]) -> dict[str, Any]:
    decisions = rule.decide(logits)
    shown = [(d.shown, gold) for d, gold in zip(decisions, labels, strict=True) if d.shown != UNCLEAR]
    return {
        "n": len(labels),
        "macro_f1": classification_report(list(labels), [d.label for d in decisions])["macro_f1"],
        "shown": round(len(shown) / len(labels), 4),
        "precision": round(sum(a == b for a, b in shown) / len(shown), 4) if shown else 0.0,
    }


def cached_logits(model: Path, inputs: Sequence[tuple[str, str]], compute: Any) -> tuple[np.ndarray, float | None]:
    digest = hashlib.sha256(json.dumps([str(model.resolve()), list(inputs)]).encode()).hexdigest()[:16]
    path = CACHE / f"{model.name}-{digest}.npy"
    if path.exists():
        return np.load(path), None
    started = time.perf_counter()
    logits = compute(inputs)
    elapsed = time.perf_counter() - started
    CACHE.mkdir(parents=True, exist_ok=True)
    np.save(path, logits)
    return logits, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, action="append", required=True, help="a checkpoint folder; repeat")
    parser.add_argument("--refit", action="store_true", help="also a rule fitted on gold dev + half 0")
    parser.add_argument(
        "--save-rule",
        action="store_true",
        help="with --refit: write each refit rule beside its checkpoint (decision.json), as fit_verifier_rule "
        "--product-shaped-half 0 would from the same logits",
    )
    parser.add_argument(
        "--target-precision",
        type=float,
        default=0.85,
        help="with --refit: the shown precision the refit rule's Unclear threshold aims at on the pooled fitted sets",
    )
    parser.add_argument(
        "--per-label-thresholds",
        action="store_true",
        help="with --refit: an Unclear threshold per label (verifier.decision), each at the target precision",
    )
    parser.add_argument(
        "--document-order",
        action="store_true",
        help="the chosen sentences in the abstract's order (the reading before)",
    )
    parser.add_argument("--json", type=Path, default=Path("var/benchmarks/product_shaped_dev.json"))
    options = parser.parse_args()
    from verifier.cross_encoder import CrossEncoderVerifier

    verification = settings.VERIMED.verification
    data_root = settings.VERIMED.paths.data_dir
    shaped = product_dev_pairs(data_root)
    gold = gold_dev(data_root)
    reading = product_reading(
        engines.embedder(), Path(verification.evidence_model), evidence_sentences=verification.evidence_sentences
    )
    order = options.document_order
    shaped_inputs = reading.inputs([pair.pair for pair in shaped], document_order=order)
    gold_inputs = {name: reading.inputs(pairs, document_order=order) for name, pairs in gold.items()}
    print(f"product-shaped dev: {len(shaped)} pairs; gold dev: " + ", ".join(f"{n} {len(p)}" for n, p in gold.items()))
    description = reading.description + (", in document order" if order else ", best first")
    results: dict[str, Any] = {"machine": os.uname().machine, "reading": description, "models": {}}
    for model in options.model:
        classifier = CrossEncoderVerifier.load(
            model, max_length=verification.max_length, precision=verification.verifier_precision
        )
        shaped_logits, seconds = cached_logits(model, shaped_inputs, classifier.logits)
        gold_logits = {name: cached_logits(model, gold_inputs[name], classifier.logits)[0] for name in gold}
        rule = DecisionRule.load(model)
        entry: dict[str, Any] = {
            "precision": verification.verifier_precision,
            "max_length": verification.max_length,
            "shaped_pairs_per_s": round(len(shaped) / seconds, 1) if seconds else None,
            "shipped_rule": {
                "product_shaped": construction_report(rule, shaped_logits, shaped),
                "gold": {n: gold_report(rule, gold_logits[n], [p.label for p in gold[n]]) for n in gold},
            },
        }
        if options.refit:
            entry["refit_rule"], refit = _refit(
                shaped,
                shaped_logits,
                gold,
                gold_logits,
                shipped=rule,
                target_precision=options.target_precision,
                per_label_thresholds=options.per_label_thresholds,
            )
            if options.save_rule:
                print(f"wrote {refit.save(model)}")
        results["models"][str(model)] = entry
    print(format_table(results))
    options.json.parent.mkdir(parents=True, exist_ok=True)
    options.json.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {options.json}")


def _refit(
    shaped: Sequence[ShapedPair],
    shaped_logits: np.ndarray,
    gold: dict[str, list[ClaimDocumentPair]],
    gold_logits: dict[str, np.ndarray],
    *,
    shipped: DecisionRule,
    target_precision: float,
    per_label_thresholds: bool,
) -> tuple[dict[str, Any], DecisionRule]:
    first = {id(pair) for pair in half(shaped, 0)}
    fit_rows = [i for i, pair in enumerate(shaped) if id(pair) in first]
    read_rows = [i for i, pair in enumerate(shaped) if id(pair) not in first]
    # The sets `manage.py fit_verifier_rule --product-shaped-half 0` fits on, so that the rule it writes is this one:
    # the three gold dev splits and half 0. HealthVer's raw dev CSV is not among them.
    fitted = [split.name for split in DEV_SPLITS]
    dev = {name: (gold_logits[name], [p.label for p in gold[name]]) for name in fitted}
    dev["product_shaped"] = (shaped_logits[fit_rows], [shaped[i].label for i in fit_rows])
    rule = fit_decision_rule(dev, target_precision=target_precision, per_label_thresholds=per_label_thresholds)
    return {
        "rule": {
            "temperature": rule.temperature,
            "bias": rule.bias,
            "unclear_threshold": rule.unclear_threshold,
            "label_thresholds": rule.label_thresholds,
        },
        "product_shaped_half1": construction_report(rule, shaped_logits[read_rows], [shaped[i] for i in read_rows]),
        # The shipped rule on the same half, for a side-by-side reading.
        "shipped_rule_half1": construction_report(shipped, shaped_logits[read_rows], [shaped[i] for i in read_rows]),
        "gold_fitted": {n: gold_report(rule, gold_logits[n], [p.label for p in gold[n]]) for n in gold},
    }, rule


def format_table(results: dict[str, Any]) -> str:
    lines = [f"reading: {results['reading']}"]
    for model, entry in results["models"].items():
        for title, rule_name, shaped_key, gold_key in (
            ("shipped rule, all pairs", "shipped_rule", "product_shaped", "gold"),
            ("shipped rule, half 1", "refit_rule", "shipped_rule_half1", None),
            ("refit rule, half 1", "refit_rule", "product_shaped_half1", "gold_fitted"),
        ):
            if rule_name not in entry:
                continue
            block = entry[rule_name]
            lines.append(f"\n{Path(model).name} ({title}; {entry['precision']})")
            lines.append(
                f"  {'construction':<16} {'n':>5} {'expected':<12} {'shown rec.':>10} {'leaning':>8} {'Unclear':>8}"
            )
            for name, row in block[shaped_key].items():
                if name == "all":
                    continue
                lines.append(
                    f"  {name:<16} {row['n']:>5} {row['expected']:<12} {row['shown_recall']:>10.3f} "
                    f"{row['leaning_recall']:>8.3f} {row['unclear']:>8.3f}"
                )
            overall = block[shaped_key]["all"]
            lines.append(
                f"  {'all':<16} {overall['n']:>5} macro-F1 {overall['macro_f1']:.3f}, Unclear {overall['unclear']:.3f}"
            )
            if gold_key is None:
                continue
            lines.append(f"  {'gold dev split':<16} {'n':>5} {'macro-F1':>9} {'shown':>7} {'prec.':>7}")
            for name, row in block[gold_key].items():
                lines.append(
                    f"  {name:<16} {row['n']:>5} {row['macro_f1']:>9.3f} {row['shown']:>7.3f} {row['precision']:>7.3f}"
                )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
