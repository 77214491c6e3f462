"""Fit the bottom line's rule on dev questions only (`manage.py fit_bottom_line`).

The dev questions are BioASQ's (the benchmark's dev file), PQA-L's items outside the test ids that the verifier
never trained on, and PubMedQA-style yes/no items outside PQA-L. Each is read as `evaluate answers` reads a test
question (`read_questions`), and the grid of `verifier.bottom_line` is searched on the weighted accuracy below.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from indexer.base import Embedder
from indexer.hybrid import HybridSettings
from verifier.answer_evaluation import (
    MODEL_READINGS_FILE,
    AnsweringModel,
    AnswerSets,
    Write,
    read_questions,
    served_for_run,
    set_indexes,
)
from verifier.bottom_line import BottomLineRule, DevQuestion, fit_bottom_line_rule, weighted_accuracy
from verifier.verify import AnswerVerifier
from verifier.yes_no_sets import BIOASQ, GOLD_ANSWERS, PUBMEDQA


def answer_shares(pqal_path: Path, test_ids_path: Path) -> dict[str, float]:
    """PQA-L's shares of yes, no and maybe outside the test split (276 / 169 / 55 of 500); the test split is not
    read for anything else."""
    raw: dict[str, dict[str, Any]] = json.loads(pqal_path.read_text(encoding="utf-8"))
    test_ids = set(json.loads(test_ids_path.read_text(encoding="utf-8")))
    decisions = Counter(str(item["final_decision"]).lower() for pmid, item in raw.items() if pmid not in test_ids)
    return {answer: decisions[answer] / sum(decisions.values()) for answer in GOLD_ANSWERS[PUBMEDQA]}


def pubmedqa_group(gold: str) -> str:
    """The fit's source for a PubMedQA-kind dev question: its gold answer (`dev_weights` says why)."""
    return f"{PUBMEDQA}:{gold}"


def dev_weights(*, shares: Mapping[str, float], with_bioasq: bool) -> dict[str, float]:
    """How much each group of dev questions counts in the fit. PubMedQA's kind (PQA-L's dev items and the extra
    CSV's) are grouped by gold answer and each group weighs its answer's share in PQA-L outside the test split, so
    a rule is scored on PubMedQA's mix of answers rather than on whatever mix the dev questions happen to have (the
    extra CSV holds 126 yes to 6 no: scored as it comes, a rule that says yes to nearly everything would win). The
    two benchmarks count equally."""
    half = 0.5 if with_bioasq else 1.0
    weights = {pubmedqa_group(answer): half * share for answer, share in shares.items()}
    if with_bioasq:
        weights[BIOASQ] = 0.5
    return weights


def fit_rule_on_dev(
    sets: AnswerSets,
    *,
    index_root: Path,
    embedder: Embedder,
    retrieval: HybridSettings,
    verifier: AnswerVerifier,
    write: Write,
    model: AnsweringModel | None = None,
) -> tuple[BottomLineRule, dict[str, Any]]:
    """The bottom line rule fitted on dev questions only: BioASQ's (the questions file given), PubMedQA's dev split
    and the extra PubMedQA-style items when given; returns it with a report of the fit. With `model`, each question's
    closest abstract is also read by that language model, and the grid offers its reading a weight."""
    dev: list[DevQuestion] = []
    weights: dict[str, float] = {}
    counts: Counter[str] = Counter()
    with served_for_run(
        model, read=model is not None, answer=False, cache_path=index_root / MODEL_READINGS_FILE, write=write
    ) as (_settings, read_model, _rate):
        dev_sets = set_indexes(sets, split="dev", index_root=index_root, embedder=embedder, write=write)
        readings = []
        for _name, _corpus, questions, index in dev_sets:
            try:
                readings += read_questions(
                    questions,
                    index=index,
                    embedder=embedder,
                    retrieval=retrieval,
                    verifier=verifier,
                    write=write,
                    read_model=read_model,
                )
            finally:
                index.close()
    counts.update(reading.question.source for reading in readings)
    for reading in readings:
        question = reading.dev_question()
        dev.append(question if question.source == BIOASQ else replace(question, source=pubmedqa_group(question.gold)))
    if sets.pubmedqa is not None:
        shares = answer_shares(sets.pubmedqa, sets.pubmedqa_ids or sets.pubmedqa.with_name("test_ground_truth.json"))
        weights = dev_weights(shares=shares, with_bioasq=BIOASQ in counts)
    fitted_on = [f"{name} dev ({count})" for name, count in counts.items()]
    rule = fit_bottom_line_rule(dev, fitted_on=fitted_on, source_weights=weights or None, with_stance=False)
    default = BottomLineRule()
    groups = sorted({question.source for question in dev})
    return rule, {
        "fitted_on": fitted_on,
        "source_weights": weights,
        "dev_accuracy_fitted": rule.dev_accuracy,
        "dev_accuracy_by_group": {
            group: {
                "n": sum(q.source == group for q in dev),
                "accuracy": round(weighted_accuracy([q for q in dev if q.source == group], rule), 4),
            }
            for group in groups
        },
        "dev_accuracy_default_rule": round(weighted_accuracy(dev, default, weights or None), 4),
        "dev_accuracy_without_model_reading": (
            fit_bottom_line_rule(
                [replace(question, model_reading=None) for question in dev],
                fitted_on=fitted_on,
                source_weights=weights or None,
                with_stance=False,
            ).dev_accuracy
            if model is not None
            else None
        ),
        "rule": asdict(rule),
    }
