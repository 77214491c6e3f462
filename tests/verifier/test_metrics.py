from __future__ import annotations

import pytest

from verifier.metrics import classification_report


def test_macro_f1_counts_a_label_never_predicted_as_zero() -> None:
    gold = ["SUPPORT", "SUPPORT", "CONTRADICT", "NO_EVIDENCE"]
    predicted = ["SUPPORT", "SUPPORT", "SUPPORT", "SUPPORT"]
    report = classification_report(gold, predicted)
    support_f1 = 2 * 0.5 * 1.0 / 1.5
    assert report["macro_f1"] == pytest.approx(round(support_f1 / 3, 4))
    assert report["accuracy"] == 0.5
    per_label = report["per_label"]
    assert isinstance(per_label, dict)
    assert per_label["CONTRADICT"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 1}


def test_a_perfect_run_scores_one() -> None:
    labels = ["SUPPORT", "CONTRADICT", "NO_EVIDENCE"]
    assert classification_report(labels, labels)["macro_f1"] == 1.0
