from __future__ import annotations

import pytest

from verifier.metrics import balanced_accuracy, classification_report, threshold_ceiling


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


def test_the_threshold_ceiling_is_the_best_cut_and_the_auc() -> None:
    # One supported item scored below an unsupported one: no cut separates them all; the best keeps 3 of 4 right.
    scores, gold = [0.9, 0.4, 0.6, 0.1], [True, True, False, False]
    assert threshold_ceiling(scores, gold) == {"auc": 0.75, "best_balanced_accuracy": 0.75}
    assert balanced_accuracy([s >= 0.5 for s in scores], gold) == 0.5


def test_the_threshold_ceiling_has_nothing_to_say_about_one_side() -> None:
    assert threshold_ceiling([0.2, 0.8], [True, True]) == {"auc": None, "best_balanced_accuracy": None}
    assert balanced_accuracy([], []) == 0.0
