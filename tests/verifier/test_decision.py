"""The decision rule: calibration, biases, the CONTRADICT floor and the Unclear threshold, fitted on dev data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from verifier.decision import (
    DecisionRule,
    choose_unclear_threshold,
    expected_calibration_error,
    fit_decision_rule,
    fit_temperature,
)

LABELS = ("SUPPORT", "CONTRADICT", "NO_EVIDENCE")


def logits_for(probabilities: list[list[float]]) -> np.ndarray:
    return np.log(np.asarray(probabilities))


def test_the_identity_rule_is_the_plain_argmax_and_never_unclear() -> None:
    [decision] = DecisionRule().decide(logits_for([[0.2, 0.5, 0.3]]))

    assert decision.label == "CONTRADICT"
    assert decision.shown == decision.raw_label == "CONTRADICT"
    assert decision.confidence == pytest.approx(0.5)
    assert decision.probabilities == pytest.approx(decision.raw_probabilities)


def test_a_low_confidence_verdict_is_shown_as_unclear_with_its_leaning_kept() -> None:
    rule = DecisionRule(unclear_threshold=0.6)
    unsure, sure = rule.decide(logits_for([[0.5, 0.2, 0.3], [0.8, 0.1, 0.1]]))

    assert (unsure.shown, unsure.label) == ("UNCLEAR", "SUPPORT")
    assert (sure.shown, sure.label) == ("SUPPORT", "SUPPORT")


def test_an_unsure_contradiction_yields_to_the_next_label_under_the_floor() -> None:
    rule = DecisionRule(contradict_floor=0.5)
    unsure, sure = rule.decide(logits_for([[0.35, 0.45, 0.2], [0.2, 0.7, 0.1]]))

    assert unsure.label == "SUPPORT"
    assert unsure.raw_label == "CONTRADICT"
    assert sure.label == "CONTRADICT"


def test_a_bias_moves_the_boundary_towards_a_label() -> None:
    rule = DecisionRule(bias={"CONTRADICT": 0.5})
    [decision] = rule.decide(logits_for([[0.4, 0.3, 0.3]]))

    assert decision.label == "CONTRADICT"
    assert decision.confidence == pytest.approx(0.3)  # the confidence stays the calibrated probability


def test_the_temperature_that_fits_an_overconfident_model_is_above_one() -> None:
    rng = np.random.default_rng(0)
    gold = [LABELS[i] for i in rng.integers(0, 3, 600)]
    logits = rng.normal(0, 1, (600, 3))
    for row, label in zip(logits, gold, strict=True):
        row[LABELS.index(label)] += 1.0  # informative...
    overconfident = logits * 6  # ...but far too sure

    assert fit_temperature(overconfident, gold) > 3
    rule = DecisionRule(temperature=fit_temperature(overconfident, gold))
    decisions = rule.decide(overconfident)
    correct = [d.label == g for d, g in zip(decisions, gold, strict=True)]
    before = expected_calibration_error([d.confidence for d in DecisionRule().decide(overconfident)], correct)
    after = expected_calibration_error([d.confidence for d in decisions], correct)
    assert after < before / 2


def test_expected_calibration_error_of_perfect_and_of_overconfident_predictions() -> None:
    assert expected_calibration_error([1.0, 1.0], [True, True]) == 0.0
    assert expected_calibration_error([0.9] * 10, [True] * 5 + [False] * 5) == pytest.approx(0.4)
    assert expected_calibration_error([], []) == 0.0


def test_the_unclear_threshold_is_the_lowest_that_reaches_the_target_precision() -> None:
    # 10 pairs by falling confidence; the first 6 are right, then a mix.
    confidences = [0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.6, 0.55, 0.5]
    hits = [True] * 6 + [False, True, False, False]
    gold = ["SUPPORT"] * 10
    logits = logits_for(
        [
            [c, (1 - c) / 2, (1 - c) / 2] if hit else [(1 - c) / 2, (1 - c) / 2, c]
            for c, hit in zip(confidences, hits, strict=True)
        ]
    )

    threshold = choose_unclear_threshold(DecisionRule(), logits, gold, target_precision=0.85, min_coverage=0.4)

    shown = [d for d in DecisionRule(unclear_threshold=threshold).decide(logits) if d.shown != "UNCLEAR"]
    assert threshold == pytest.approx(0.6, abs=1e-5)  # 7 of 8 shown are right (0.875); one more would fall to 0.78
    assert len(shown) == 8


def test_when_the_target_is_out_of_reach_the_threshold_keeps_the_minimum_coverage() -> None:
    logits = logits_for([[0.9, 0.05, 0.05], [0.8, 0.1, 0.1], [0.7, 0.2, 0.1], [0.6, 0.3, 0.1]])
    gold = ["CONTRADICT", "SUPPORT", "CONTRADICT", "SUPPORT"]

    threshold = choose_unclear_threshold(DecisionRule(), logits, gold, target_precision=0.85, min_coverage=0.5)

    assert threshold == pytest.approx(0.8)  # precision 0.5 at coverage 0.5, the best that covers half


def test_fitting_on_dev_recovers_a_biased_model_and_stores_the_rule(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    gold = [LABELS[i] for i in rng.integers(0, 3, 900)]
    logits = rng.normal(0, 1, (900, 3))
    for row, label in zip(logits, gold, strict=True):
        row[LABELS.index(label)] += 1.5
    logits[:, 1] -= 1.2  # a model that under-predicts CONTRADICT
    dev = {"a": (logits[:450], gold[:450]), "b": (logits[450:], gold[450:])}

    rule = fit_decision_rule(dev)

    assert rule.bias.get("CONTRADICT", 0.0) > 0.5
    assert rule.fitted_on == ("a", "b")
    assert 0.0 < rule.unclear_threshold < 1.0
    before = sum(d.label == "CONTRADICT" for d in DecisionRule().decide(logits))
    after = sum(d.label == "CONTRADICT" for d in rule.decide(logits))
    assert after > before * 1.5
    rule.save(tmp_path)
    assert DecisionRule.load(tmp_path) == rule


def test_a_checkpoint_without_a_stored_rule_gets_the_identity(tmp_path: Path) -> None:
    assert DecisionRule.load(tmp_path) == DecisionRule()


def test_each_label_gets_its_own_threshold_when_asked() -> None:
    # NO_EVIDENCE verdicts are right at every confidence; SUPPORT verdicts only above 0.8 (below, the pair is a
    # contradiction). Pooled, 18 of 20 verdicts are right, so one threshold at 0.9 precision hides nothing and shows
    # the two wrong SUPPORT verdicts; a threshold per label hides exactly those.
    rows, gold = [], []
    for confidence in (0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.6, 0.55, 0.5):
        rest = (1 - confidence) / 2
        rows.append([rest, rest, confidence])
        gold.append("NO_EVIDENCE")
        rows.append([confidence, rest, rest])
        gold.append("SUPPORT" if confidence > 0.8 else "CONTRADICT")
    logits = logits_for(rows)
    dev = {"a": (logits, gold)}

    single = fit_decision_rule(dev, target_precision=0.9, min_coverage=0.3)
    per_label = fit_decision_rule(dev, target_precision=0.9, min_coverage=0.3, per_label_thresholds=True)

    def shown(rule: DecisionRule, label: str) -> list[str]:
        return [g for d, g in zip(rule.decide(logits), gold, strict=True) if d.shown == label]

    assert single.label_thresholds == {}
    assert shown(single, "SUPPORT").count("CONTRADICT") == 2
    assert shown(per_label, "SUPPORT") == ["SUPPORT"] * 3
    assert shown(per_label, "NO_EVIDENCE") == ["NO_EVIDENCE"] * 10
    assert per_label.label_thresholds["SUPPORT"] > per_label.unclear_threshold


def test_a_label_threshold_overrides_the_shared_one_and_survives_a_round_trip(tmp_path: Path) -> None:
    rule = DecisionRule(unclear_threshold=0.7, label_thresholds={"NO_EVIDENCE": 0.4})
    logits = logits_for([[0.2, 0.3, 0.5], [0.5, 0.3, 0.2]])
    assert [d.shown for d in rule.decide(logits)] == ["NO_EVIDENCE", "UNCLEAR"]
    rule.save(tmp_path)
    assert DecisionRule.load(tmp_path) == rule
