"""From the classifier's logits to the verdict a reader sees: calibration, a tuned decision rule and "Unclear".

Four parts, all fitted on dev data only and stored beside the checkpoint (`decision.json`) so that a score is
never tuned on the file it reports:
- a temperature that makes the softmax honest (minimum negative log-likelihood on dev, Guo et al. 2017);
- a bias per label added to the calibrated log-probabilities, chosen for macro-F1 (a small model trained on
  skewed data under-predicts its rare labels; a bias moves the boundary without retraining);
- a CONTRADICT floor: a contradiction whose calibrated probability is below it yields to the next label, so one
  unsure contradiction cannot paint a supported sentence red;
- an Unclear threshold: a verdict whose calibrated confidence is below it is shown as Unclear, with the model's
  leaning kept for the panel. Optionally one per label: a single threshold fitted for precision over all three
  labels hides the easy ones with the hard (a NO_EVIDENCE verdict on another abstract's pair is right far more often
  at the same confidence than a CONTRADICT), so each label may carry its own.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
from sklearn.metrics import f1_score

from verifier.verdicts import CONTRADICT, NO_EVIDENCE, SUPPORT, UNCLEAR

DECISION_FILE = "decision.json"
LABELS: tuple[str, str, str] = (SUPPORT, CONTRADICT, NO_EVIDENCE)


@dataclass(frozen=True)
class Decision:
    shown: str  # the label the page shows: one of LABELS, or UNCLEAR
    label: str  # the rule's label (the model's leaning when shown is UNCLEAR)
    confidence: float  # the calibrated probability of `label`
    probabilities: dict[str, float]  # calibrated
    raw_label: str  # the plain argmax of the uncalibrated softmax
    raw_probabilities: dict[str, float]


@dataclass(frozen=True)
class DecisionRule:
    """The identity rule (temperature 1, no bias, no floor, no Unclear) is today's argmax."""

    labels: tuple[str, ...] = LABELS
    temperature: float = 1.0
    bias: dict[str, float] = field(default_factory=dict)
    contradict_floor: float = 0.0
    unclear_threshold: float = 0.0
    fitted_on: tuple[str, ...] = ()  # the dev sets it was chosen on, for the model card and the audit
    label_thresholds: dict[str, float] = field(default_factory=dict)  # per label; a label absent uses the one above

    def threshold_for(self, label: str) -> float:
        return self.label_thresholds.get(label, self.unclear_threshold)

    def calibrated(self, logits: np.ndarray) -> np.ndarray:
        """Temperature-scaled probabilities, one row per pair."""
        return softmax(np.asarray(logits, dtype=np.float64) / self.temperature)

    def decide_labels(self, calibrated: np.ndarray) -> list[str]:
        scores = np.log(np.clip(calibrated, 1e-12, 1.0)) + np.array(
            [self.bias.get(label, 0.0) for label in self.labels]
        )
        decided = []
        contradict = self.labels.index(CONTRADICT) if CONTRADICT in self.labels else -1
        for row, probabilities in zip(scores, calibrated, strict=True):
            order = np.argsort(-row, kind="stable")
            best = int(order[0])
            if best == contradict and probabilities[best] < self.contradict_floor:
                best = int(order[1])
            decided.append(self.labels[best])
        return decided

    def decide(self, logits: np.ndarray) -> list[Decision]:
        logits = np.asarray(logits, dtype=np.float64)
        raw = softmax(logits)
        calibrated = self.calibrated(logits)
        decisions = []
        for label, row, raw_row in zip(self.decide_labels(calibrated), calibrated, raw, strict=True):
            confidence = float(row[self.labels.index(label)])
            decisions.append(
                Decision(
                    shown=UNCLEAR if confidence < self.threshold_for(label) else label,
                    label=label,
                    confidence=confidence,
                    probabilities={name: float(value) for name, value in zip(self.labels, row, strict=True)},
                    raw_label=self.labels[int(np.argmax(raw_row))],
                    raw_probabilities={name: float(value) for name, value in zip(self.labels, raw_row, strict=True)},
                )
            )
        return decisions

    def save(self, folder: Path) -> Path:
        path = Path(folder) / DECISION_FILE
        path.write_text(json.dumps(asdict(self), indent=2) + "\n")
        return path

    @classmethod
    def load(cls, folder: Path | str) -> DecisionRule:
        """The rule stored with a checkpoint; a checkpoint without one (any hub model) gets the identity rule."""
        path = Path(folder) / DECISION_FILE
        if not path.exists():
            return cls()
        data = json.loads(path.read_text())
        return cls(
            labels=tuple(data.get("labels", LABELS)),
            temperature=float(data["temperature"]),
            bias={str(k): float(v) for k, v in data.get("bias", {}).items()},
            contradict_floor=float(data.get("contradict_floor", 0.0)),
            unclear_threshold=float(data.get("unclear_threshold", 0.0)),
            fitted_on=tuple(data.get("fitted_on", ())),
            label_thresholds={str(k): float(v) for k, v in data.get("label_thresholds", {}).items()},
        )


def softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=1, keepdims=True)
    exp = np.exp(shifted)
    result: np.ndarray = exp / exp.sum(axis=1, keepdims=True)
    return result


def expected_calibration_error(confidences: Sequence[float], correct: Sequence[bool], *, bins: int = 10) -> float:
    """ECE with equal-width confidence bins: the gap between confidence and accuracy, weighted by bin size."""
    if not confidences:
        return 0.0
    values = np.asarray(confidences, dtype=np.float64)
    hits = np.asarray(correct, dtype=np.float64)
    edges = np.linspace(0.0, 1.0, bins + 1)
    total = 0.0
    for low, high in itertools.pairwise(edges):
        inside = (values > low) & (values <= high) if low > 0 else (values >= low) & (values <= high)
        if inside.any():
            total += inside.sum() / len(values) * abs(values[inside].mean() - hits[inside].mean())
    return float(total)


# Fitting on dev ------------------------------------------------------------------------------------------------


def fit_temperature(logits: np.ndarray, gold: Sequence[str], labels: Sequence[str] = LABELS) -> float:
    """The temperature of least negative log-likelihood, by golden-section search on log T in [1/10, 10]."""
    targets = np.array([list(labels).index(label) for label in gold])
    logits = np.asarray(logits, dtype=np.float64)

    def nll(log_t: float) -> float:
        probabilities = softmax(logits / math.exp(log_t))
        return float(-np.log(np.clip(probabilities[np.arange(len(targets)), targets], 1e-12, 1.0)).mean())

    low, high = math.log(0.1), math.log(10.0)
    ratio = (math.sqrt(5) - 1) / 2
    for _ in range(60):
        a, b = high - ratio * (high - low), low + ratio * (high - low)
        if nll(a) < nll(b):
            high = b
        else:
            low = a
    return round(math.exp((low + high) / 2), 4)


def fit_decision_rule(
    dev: Mapping[str, tuple[np.ndarray, Sequence[str]]],
    *,
    target_precision: float = 0.85,
    min_coverage: float = 0.40,
    labels: Sequence[str] = LABELS,
    per_label_thresholds: bool = False,
) -> DecisionRule:
    """Fit every part on the named dev sets (logits, gold labels), each set weighted equally.

    Biases and the floor maximise the mean macro-F1 over the sets (coordinate search on a grid, two passes).
    The Unclear threshold is the lowest confidence at which the shown verdicts of the pooled dev pairs reach
    `target_precision`; where none does while covering `min_coverage`, the one of best precision that still covers
    `min_coverage`. With `per_label_thresholds` each label also gets its own threshold, chosen the same way on the
    pooled pairs the rule gives that label.
    """
    names = sorted(dev)
    logits = np.concatenate([np.asarray(dev[name][0], dtype=np.float64) for name in names])
    gold_all = [label for name in names for label in dev[name][1]]
    temperature = fit_temperature(logits, gold_all, labels)
    rule = DecisionRule(labels=tuple(labels), temperature=temperature, fitted_on=tuple(names))
    calibrated = {name: rule.calibrated(dev[name][0]) for name in names}

    def objective(candidate: DecisionRule) -> float:
        return float(
            np.mean(
                [
                    f1_score(
                        dev[n][1],
                        candidate.decide_labels(calibrated[n]),
                        labels=list(labels),
                        average="macro",
                        zero_division=0,
                    )
                    for n in names
                ]
            )
        )

    grid = [round(value, 2) for value in np.arange(-1.5, 1.51, 0.1)]
    best, best_score = rule, objective(rule)
    for _ in range(2):
        for label in (CONTRADICT, NO_EVIDENCE):  # SUPPORT stays 0: only differences between biases matter
            for value in grid:
                candidate = replace(best, bias={**best.bias, label: value})
                score = objective(candidate)
                if score > best_score + 1e-9:
                    best, best_score = candidate, score
        for floor in [round(value, 2) for value in np.arange(0.0, 0.71, 0.05)]:
            candidate = replace(best, contradict_floor=floor)
            score = objective(candidate)
            if score > best_score + 1e-9:
                best, best_score = candidate, score
    threshold = choose_unclear_threshold(
        best, logits, gold_all, target_precision=target_precision, min_coverage=min_coverage
    )
    best = replace(best, unclear_threshold=threshold)
    if per_label_thresholds:
        decided = np.array(best.decide_labels(best.calibrated(logits)))
        gold_array = np.array(gold_all)
        per_label = {}
        for label in labels:
            rows = decided == label
            if rows.any():
                per_label[label] = choose_unclear_threshold(
                    best,
                    logits[rows],
                    list(gold_array[rows]),
                    target_precision=target_precision,
                    min_coverage=min_coverage,
                )
        best = replace(best, label_thresholds=per_label)
    return best


def choose_unclear_threshold(
    rule: DecisionRule,
    logits: np.ndarray,
    gold: Sequence[str],
    *,
    target_precision: float,
    min_coverage: float,
) -> float:
    decisions = rule.decide(logits)
    ranked = sorted(
        zip(
            (d.confidence for d in decisions), (d.label == g for d, g in zip(decisions, gold, strict=True)), strict=True
        ),
        reverse=True,
    )
    best_threshold, best_precision, reached = 0.0, -1.0, False
    hits = 0
    for count, (confidence, hit) in enumerate(ranked, start=1):
        hits += hit
        coverage = count / len(ranked)
        precision = hits / count
        next_confidence = ranked[count][0] if count < len(ranked) else -1.0
        if next_confidence == confidence:
            continue  # a threshold cannot split pairs of equal confidence
        if coverage < min_coverage:
            continue
        if precision >= target_precision:
            best_threshold, reached = confidence, True  # keep going: a lower one that still reaches it shows more
        elif not reached and precision > best_precision:
            best_threshold, best_precision = confidence, precision
    return math.floor(best_threshold * 1e6) / 1e6  # rounded down: the pair that set it stays shown
