"""Classification metrics for verdicts, from scikit-learn so they match what others report."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from sklearn.metrics import accuracy_score, balanced_accuracy_score, precision_recall_fscore_support, roc_auc_score

from verifier.base import Classification, PairClassifier
from verifier.datasets import LABELS
from verifier.decision import expected_calibration_error
from verifier.verdicts import UNCLEAR


def classification_report(gold: Sequence[str], predicted: Sequence[str]) -> dict[str, object]:
    """Macro-F1 over the three labels (a label never predicted scores 0, never skipped), accuracy, per label."""
    precision, recall, f1, support = precision_recall_fscore_support(
        gold, predicted, labels=list(LABELS), zero_division=0
    )
    per_label = {
        label: {
            "precision": round(float(precision[i]), 4),
            "recall": round(float(recall[i]), 4),
            "f1": round(float(f1[i]), 4),
            "support": int(support[i]),
        }
        for i, label in enumerate(LABELS)
    }
    return {
        "n": len(gold),
        "macro_f1": round(float(f1.mean()), 4),
        "accuracy": round(float(accuracy_score(gold, predicted)), 4) if gold else 0.0,
        "per_label": per_label,
    }


def score_classifier(
    classifier: PairClassifier,
    inputs: Sequence[tuple[str, str]],
    gold: Sequence[str],
    *,
    subsets: Mapping[str, Sequence[bool]] | None = None,
) -> dict[str, Any]:
    """The report for `classifier` on (claim, passage) inputs, with its speed and what it predicted; each of
    `subsets` (a name and a mask over the inputs) gets the same report from the same predictions under its name."""
    started = time.perf_counter()
    results = classifier.classify(inputs)
    seconds = time.perf_counter() - started
    threshold = float(getattr(getattr(classifier, "rule", None), "unclear_threshold", 0.0))
    report = {
        **results_report(results, gold, threshold=threshold),
        "pairs_per_s": round(len(inputs) / seconds, 2) if seconds else None,
    }
    for name, mask in (subsets or {}).items():
        chosen = [index for index, inside in enumerate(mask) if inside]
        report[name] = results_report([results[i] for i in chosen], [gold[i] for i in chosen], threshold=threshold)
    return report


def results_report(results: Sequence[Classification], gold: Sequence[str], *, threshold: float) -> dict[str, Any]:
    if not gold:  # an empty subset (HealthVer dev has no document unseen in training): nothing to score
        return {"n": 0, "macro_f1": None, "accuracy": None, "per_label": {}, "ece": None, "shown": {}, "predicted": {}}
    return {
        **classification_report(gold, [result.label for result in results]),
        **confidence_report(results, gold, threshold=threshold),
        "predicted": dict(Counter(result.label for result in results)),
    }


def confidence_report(results: Sequence[Classification], gold: Sequence[str], *, threshold: float) -> dict[str, Any]:
    """How far the calibrated confidence can be trusted: expected calibration error over all pairs, and the verdicts
    a reader would see (not Unclear): their share of the pairs and their accuracy over all three labels. A
    classifier without probabilities (the LLM judge) has no ECE and shows every verdict."""
    correct = [result.label == label for result, label in zip(results, gold, strict=True)]
    confidences = [result.confidence for result in results]
    shown = [hit for result, hit in zip(results, correct, strict=True) if result.shown_label != UNCLEAR]
    return {
        "ece": None
        if any(value is None for value in confidences)
        else round(expected_calibration_error([float(v) for v in confidences if v is not None], correct), 4),
        "shown": {
            "threshold": threshold,
            "coverage": round(len(shown) / len(results), 4) if results else 0.0,
            "precision": round(sum(shown) / len(shown), 4) if shown else 0.0,
        },
    }


def balanced_accuracy(predicted: Sequence[bool], gold: Sequence[bool]) -> float:
    """Of a yes/no prediction (the mean of the recall of each side), rounded; 0 on no items."""
    return round(float(balanced_accuracy_score(gold, predicted)), 4) if gold else 0.0


def threshold_ceiling(scores: Sequence[float], gold: Sequence[bool]) -> dict[str, float | None]:
    """ROC AUC of `scores` for `gold`, and the best balanced accuracy `score >= t` reaches over every t (chosen on
    the items it scores, so an upper bound); None for both where gold holds one side only."""
    if len(set(gold)) < 2:
        return {"auc": None, "best_balanced_accuracy": None}
    values = np.asarray(scores, dtype=np.float64)
    best = max(float(balanced_accuracy_score(gold, values >= t)) for t in np.unique(values))
    return {"auc": round(float(roc_auc_score(gold, values)), 4), "best_balanced_accuracy": round(best, 4)}
