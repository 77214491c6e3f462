"""Measuring the evidence extractor on labelled (claim, document) pairs with rationale sentences.

Each tagger marks the sentences it takes for evidence; the peers are what a user would otherwise get: the sentence
closest to the claim by cosine and the best BM25 sentence, one each (what VerifAI highlights).
`evaluate_evidence` is the whole run `manage.py evaluate evidence` makes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from rank_bm25 import BM25Okapi

from indexer.base import Embedder
from indexer.stopwords import query_terms
from verifier.datasets import ClaimDocumentPair, DatasetFormatError, read_training_pairs
from verifier.evaluation import read_evaluation_pairs
from verifier.evidence_model import EvidenceTagger, late_fusion_features, sentence_f1
from verifier.vectors import SentenceVectors

PairFeatures = Callable[[ClaimDocumentPair], np.ndarray]


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
    tagger: EvidenceTagger, features: PairFeatures, *, at_least_one: bool = True
) -> Callable[[ClaimDocumentPair], tuple[list[float], list[int]]]:
    """The sentences at or above the tagger's threshold; with `at_least_one`, the best-scored sentence too when none
    reaches it, as the page shows for a verdict that rests on evidence (verifier/verify.py). Every scored pair has
    gold rationale, i.e. its claim is supported or contradicted."""

    def pick(pair: ClaimDocumentPair) -> tuple[list[float], list[int]]:
        scores = tagger.probabilities(features(pair))
        marked = [int(score >= tagger.threshold) for score in scores]
        if at_least_one and scores and not any(marked):
            marked[int(np.argmax(scores))] = 1
        return scores, marked

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


def format_evidence_table(result: dict[str, Any]) -> str:
    rows = [("model", result)] + [(name, scores) for name, scores in result["baselines"].items()]
    lines = [f"{'run':<28} {'n':>5} {'P':>6} {'R':>6} {'F1':>6} {'top1':>6} {'claims/s':>9}"]
    for name, scores in rows:
        lines.append(
            f"{name:<28} {scores['n']:>5} {scores['precision']:>6.3f} {scores['recall']:>6.3f} {scores['f1']:>6.3f} "
            f"{scores['top1_hit']:>6.3f} {scores['claims_per_s']!s:>9}"
        )
    return "\n".join(lines)


def run_evidence(
    pairs: Sequence[ClaimDocumentPair],
    *,
    taggers: dict[str, tuple[EvidenceTagger, PairFeatures]],
    cosine: Callable[[ClaimDocumentPair], list[float]],
    main: str,
    training_documents: set[str] | None = None,
) -> dict[str, Any]:
    """Each run also reports `unseen_documents`: the pairs whose document is cited by no training claim."""
    with_rationale = [pair for pair in pairs if pair.rationale and pair.document.sentences]
    unseen = [pair for pair in with_rationale if pair.document.doc_id not in (training_documents or set())]
    picks = {name: tagger_pick(*entry) for name, entry in taggers.items()}
    # The threshold alone, as the tagger was measured before: a pair where no sentence reaches it shows nothing.
    picks.update({f"{name}_threshold_only": tagger_pick(*entry, at_least_one=False) for name, entry in taggers.items()})
    picks["closest_sentence_cosine"] = top1_pick(cosine)
    picks["bm25_top1"] = top1_pick(bm25_scores)
    runs = {
        name: {**score_sentence_picks(with_rationale, pick), "unseen_documents": score_sentence_picks(unseen, pick)}
        for name, pick in picks.items()
    }
    result: dict[str, Any] = {"model": main, "threshold": taggers[main][0].threshold, **runs.pop(main)}
    result["baselines"] = runs
    return result


def evaluate_evidence(
    claims: Path,
    *,
    corpus: Path,
    embedder: Embedder,
    late_fusion: Path,
    early_fusion: Path,
    verifier_model: Path,
    data_root: Path,
    write: Callable[[str], None],
) -> dict[str, Any]:
    """On the SciFact-format pairs of `claims`: the LateFusion tagger in `late_fusion` against the peers, and the
    EarlyFusion tagger in `early_fusion` when one was trained (it reads each pair through the cross-encoder in
    `verifier_model`)."""
    pairs = [
        pair for pair in read_evaluation_pairs(claims, corpus, "scifact") if pair.rationale and pair.document.sentences
    ]
    if not pairs:
        raise DatasetFormatError(f"{claims} has no pairs with rationale sentences")
    vectors = SentenceVectors(embedder)
    write(f"{len(pairs)} (claim, document) pairs with rationales; embedding their sentences…")
    vectors.add_pairs(pairs)

    def late(pair: ClaimDocumentPair) -> np.ndarray:
        return late_fusion_features(vectors.vector(pair.claim), vectors.matrix(pair.document.sentences))

    taggers: dict[str, tuple[EvidenceTagger, PairFeatures]] = {"late_fusion": (EvidenceTagger.load(late_fusion), late)}
    if (early_fusion / "config.json").exists():
        from verifier.cross_encoder import CrossEncoderVerifier  # torch: loaded only when a run needs it

        encoder = CrossEncoderVerifier.load(verifier_model, max_length=128, batch_size=64)

        def early(pair: ClaimDocumentPair) -> np.ndarray:
            # Per document, as at question time, so claims/s includes the cross-encoder's reading.
            return encoder.pair_features([(pair.claim, sentence) for sentence in pair.document.sentences])

        taggers["early_fusion"] = (EvidenceTagger.load(early_fusion), early)
    else:
        write(f"no EarlyFusion tagger in {early_fusion}; it is left out")

    def cosine(pair: ClaimDocumentPair) -> list[float]:
        return [float(v) for v in vectors.matrix(pair.document.sentences) @ vectors.vector(pair.claim)]

    training = {pair.document.doc_id for pair in read_training_pairs(data_root)}
    return {
        "claims": str(claims),
        **run_evidence(pairs, taggers=taggers, cosine=cosine, main="late_fusion", training_documents=training),
    }
