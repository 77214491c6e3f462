"""Measuring the claim verifier and the evidence extractor on labelled (claim, document) pairs.

Verification reads each pair the way the product does: the evidence finder picks the document's top sentences
and the classifier reads the claim against the title + those sentences (never the gold rationale). Peers run in
the same command on the same pairs: the same checkpoint on whole abstracts, the majority class and the few-shot
LLM judge (on a seeded, label-balanced sample, since it takes about a second a pair on this CPU).
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from rank_bm25 import BM25Okapi

from indexer.stopwords import query_terms
from verifier.datasets import LABELS, ClaimDocumentPair
from verifier.evidence_model import EvidenceTagger, sentence_f1
from verifier.metrics import classification_report, score_classifier
from verifier.pairs import PairClassifier, verifier_passage
from verifier.verify import EvidenceFinder


def verifier_inputs(
    pairs: Sequence[ClaimDocumentPair], finder: EvidenceFinder | None, evidence_sentences: int
) -> list[tuple[str, str]]:
    """(claim, passage) as the product builds them; `finder` None gives the whole abstract."""
    inputs = []
    for pair in pairs:
        sentences = pair.document.sentences
        chosen = None
        if finder is not None:
            scores = finder.scores(pair.claim, sentences)
            chosen = sorted(range(len(sentences)), key=lambda index: (-scores[index], index))[:evidence_sentences]
        inputs.append((pair.claim, verifier_passage(pair.document.title, sentences, chosen)))
    return inputs


def majority_baseline(train_labels: Sequence[str], gold: Sequence[str]) -> dict[str, Any]:
    majority = Counter(train_labels).most_common(1)[0][0] if train_labels else LABELS[0]
    return {**classification_report(gold, [majority] * len(gold)), "label": majority}


def balanced_sample(pairs: Sequence[ClaimDocumentPair], size: int, *, seed: int = 13) -> list[int]:
    """Indices of up to `size` pairs, as equal per label as the data allows, in a seeded order."""
    rng = random.Random(seed)
    by_label: dict[str, list[int]] = {label: [] for label in LABELS}
    for index, pair in enumerate(pairs):
        by_label[pair.label].append(index)
    for indices in by_label.values():
        rng.shuffle(indices)
    chosen: list[int] = []
    while len(chosen) < min(size, len(pairs)):
        progressed = False
        for label in LABELS:
            if by_label[label] and len(chosen) < size:
                chosen.append(by_label[label].pop())
                progressed = True
        if not progressed:
            break
    return sorted(chosen)


# Evidence extraction -------------------------------------------------------------------------------------------


def _gold(pair: ClaimDocumentPair) -> list[int]:
    rationale = set(pair.rationale)
    return [int(index in rationale) for index in range(len(pair.document.sentences))]


def score_sentence_picks(
    pairs: Sequence[ClaimDocumentPair],
    pick: Callable[[ClaimDocumentPair], tuple[list[float], list[int]]],
) -> dict[str, Any]:
    """`pick` returns (score per sentence, 0/1 per sentence); top1_hit asks whether the best-scored sentence is gold."""
    started = time.perf_counter()
    predicted, gold, hits, first = [], [], 0, 0
    for pair in pairs:
        scores, marked = pick(pair)
        predicted.append(marked)
        gold.append(_gold(pair))
        best = int(np.argmax(scores)) if scores else -1
        hits += int(best in pair.rationale)
        first += int(best == 0)
    seconds = time.perf_counter() - started
    precision, recall, f1 = sentence_f1(predicted, gold)
    return {
        "n": len(pairs),
        "precision": round(precision, 4),
        "recall": round(recall, 4),
        "f1": round(f1, 4),
        "top1_hit": round(hits / len(pairs), 4) if pairs else 0.0,
        # A position probe: how often the best-scored sentence is the first, against how often gold has it there.
        "top1_is_first_sentence": round(first / len(pairs), 4) if pairs else 0.0,
        "gold_has_first_sentence": round(sum(0 in pair.rationale for pair in pairs) / len(pairs), 4) if pairs else 0.0,
        "claims_per_s": round(len(pairs) / seconds, 1) if seconds else None,
    }


def tagger_pick(
    tagger: EvidenceTagger, features: Callable[[ClaimDocumentPair], np.ndarray]
) -> Callable[[ClaimDocumentPair], tuple[list[float], list[int]]]:
    def pick(pair: ClaimDocumentPair) -> tuple[list[float], list[int]]:
        scores = tagger.probabilities(features(pair))
        return scores, [int(score >= tagger.threshold) for score in scores]

    return pick


def top1_pick(
    score: Callable[[ClaimDocumentPair], list[float]],
) -> Callable[[ClaimDocumentPair], tuple[list[float], list[int]]]:
    """A baseline that shows one sentence, the best-scored: what VerifAI highlights."""

    def pick(pair: ClaimDocumentPair) -> tuple[list[float], list[int]]:
        scores = score(pair)
        best = int(np.argmax(scores)) if scores else -1
        return scores, [int(index == best) for index in range(len(scores))]

    return pick


def bm25_scores(pair: ClaimDocumentPair) -> list[float]:
    tokenized = [query_terms(sentence) or ["_"] for sentence in pair.document.sentences]
    return [float(value) for value in BM25Okapi(tokenized).get_scores(query_terms(pair.claim))]


def format_verification_table(result: dict[str, Any]) -> str:
    rows = [("model", result)] + [(name, scores) for name, scores in result["baselines"].items()]
    header = (
        f"{'run':<34} {'n':>5} {'macro-F1':>9} {'accuracy':>9} {'ECE':>6} {'shown':>6} {'prec.':>6} {'unseen F1':>9}"
    )
    lines = [header + f" {'pairs/s':>8}"]
    for name, scores in rows:
        pairs_per_s = scores.get("pairs_per_s")
        shown = scores.get("shown") or {}
        unseen = scores.get("unseen_documents") or {}
        lines.append(
            f"{name:<34} {scores['n']:>5} {scores['macro_f1']:>9.3f} {scores['accuracy']:>9.3f} "
            f"{_cell(scores.get('ece')):>6} {_cell(shown.get('coverage')):>6} {_cell(shown.get('precision')):>6} "
            f"{_cell(unseen.get('macro_f1')) + ' (' + str(unseen.get('n', '-')) + ')' if unseen else '-':>9} "
            f"{pairs_per_s if pairs_per_s is not None else '-':>8}"
        )
    return "\n".join(lines)


def _cell(value: object) -> str:
    return f"{value:.3f}" if isinstance(value, float) else "-" if value is None else str(value)


def format_evidence_table(result: dict[str, Any]) -> str:
    rows = [("model", result)] + [(name, scores) for name, scores in result["baselines"].items()]
    lines = [f"{'run':<22} {'n':>5} {'P':>6} {'R':>6} {'F1':>6} {'top1':>6} {'claims/s':>9}"]
    for name, scores in rows:
        lines.append(
            f"{name:<22} {scores['n']:>5} {scores['precision']:>6.3f} {scores['recall']:>6.3f} {scores['f1']:>6.3f} "
            f"{scores['top1_hit']:>6.3f} {scores['claims_per_s']!s:>9}"
        )
    return "\n".join(lines)


# The two runs, as the evaluate command calls them ------------------------------------------------------------


@dataclass(frozen=True)
class Peer:
    """Another checkpoint measured in the same run: the previous one, the plain whole-abstract recipe, any other."""

    name: str
    classifier: PairClassifier
    whole_abstract: bool  # how it was trained to read: whole abstracts, or the evidence sentences


def run_verification(
    pairs: Sequence[ClaimDocumentPair],
    *,
    classifier: PairClassifier,
    finder: EvidenceFinder,
    evidence_sentences: int,
    train_labels: Sequence[str],
    judge: PairClassifier | None,
    judge_pairs: int,
    progress: Callable[[str], None],
    peers: Sequence[Peer] = (),
    training_documents: set[str] | None = None,
) -> dict[str, Any]:
    """Each classifier's report also carries `unseen_documents`: the same figures on the pairs whose document is
    cited by no training claim (HealthVer and SciFact reuse documents across their splits)."""
    gold = [pair.label for pair in pairs]
    unseen = [pair.document.doc_id not in (training_documents or set()) for pair in pairs]
    subsets = {"unseen_documents": unseen}
    progress(f"selecting evidence for {len(pairs)} pairs ({sum(unseen)} with documents unseen in training)…")
    inputs = verifier_inputs(pairs, finder, evidence_sentences)
    whole = verifier_inputs(pairs, None, 0)
    progress("classifying (evidence input)…")
    result: dict[str, Any] = {
        "model": classifier.model_id,
        "input": f"title + top {evidence_sentences} sentences by {finder.model_id}",
        **score_classifier(classifier, inputs, gold, subsets=subsets),
    }
    progress("classifying (whole-abstract input)…")
    baselines: dict[str, Any] = {
        "same_model_whole_abstract": score_classifier(classifier, whole, gold, subsets=subsets),
        "majority_class": majority_baseline(train_labels, gold),
    }
    for peer in peers:
        progress(f"classifying with peer {peer.name}…")
        baselines[f"peer_{peer.name}"] = {
            "model": peer.classifier.model_id,
            "input": "whole abstract" if peer.whole_abstract else "evidence sentences",
            **score_classifier(peer.classifier, whole if peer.whole_abstract else inputs, gold, subsets=subsets),
        }
    if judge is not None and judge_pairs > 0:
        sample = balanced_sample(pairs, judge_pairs)
        progress(f"LLM judge on {len(sample)} label-balanced pairs…")
        sample_inputs = [inputs[index] for index in sample]
        sample_gold = [gold[index] for index in sample]
        baselines["llm_judge"] = {"model": judge.model_id, **score_classifier(judge, sample_inputs, sample_gold)}
        baselines["model_on_llm_judge_sample"] = score_classifier(classifier, sample_inputs, sample_gold)
    result["baselines"] = baselines
    return result


def run_evidence(
    pairs: Sequence[ClaimDocumentPair],
    *,
    taggers: dict[str, tuple[EvidenceTagger, Callable[[ClaimDocumentPair], np.ndarray]]],
    cosine: Callable[[ClaimDocumentPair], list[float]],
    main: str,
    training_documents: set[str] | None = None,
) -> dict[str, Any]:
    """Each run also reports `unseen_documents`: the pairs whose document is cited by no training claim."""
    with_rationale = [pair for pair in pairs if pair.rationale and pair.document.sentences]
    unseen = [pair for pair in with_rationale if pair.document.doc_id not in (training_documents or set())]
    picks = {name: tagger_pick(*entry) for name, entry in taggers.items()}
    picks["closest_sentence_cosine"] = top1_pick(cosine)
    picks["bm25_top1"] = top1_pick(bm25_scores)
    runs = {
        name: {**score_sentence_picks(with_rationale, pick), "unseen_documents": score_sentence_picks(unseen, pick)}
        for name, pick in picks.items()
    }
    result: dict[str, Any] = {"model": main, "threshold": taggers[main][0].threshold, **runs.pop(main)}
    result["baselines"] = runs
    return result
