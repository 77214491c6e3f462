"""Classification metrics for verdicts, from scikit-learn so they match what others report."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

from sklearn.metrics import accuracy_score, precision_recall_fscore_support

from verifier.datasets import LABELS
from verifier.pairs import PairClassifier


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
    classifier: PairClassifier, inputs: Sequence[tuple[str, str]], gold: Sequence[str]
) -> dict[str, Any]:
    """The report for `classifier` on (claim, passage) inputs, with its speed and what it predicted."""
    started = time.perf_counter()
    predicted = [result.label for result in classifier.classify(inputs)]
    seconds = time.perf_counter() - started
    return {
        **classification_report(gold, predicted),
        "pairs_per_s": round(len(inputs) / seconds, 2) if seconds else None,
        "predicted": dict(Counter(predicted)),
    }
