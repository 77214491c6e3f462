"""Measuring the claim verifier on labelled (claim, document) pairs.

Verification reads each pair the way the product does: the evidence finder picks the document's top sentences
and the classifier reads the claim against the title + those sentences (never the gold rationale). Peers run in
the same command on the same pairs: the same checkpoint on whole abstracts, the majority class and the few-shot
LLM judge (on a seeded, label-balanced sample, since it takes about a second a pair on this CPU).
`evaluate_verification` is the whole run `manage.py evaluate verification` makes.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from generator.base import LLMSettings
from generator.registry import build_llm
from generator.serve import served_model
from indexer.base import Embedder
from verifier.base import PairClassifier
from verifier.datasets import LABELS, ClaimDocumentPair, DataFormat, DatasetFormatError, read_pairs, read_training_pairs
from verifier.evaluation_inputs import ProductReading, product_reading, verifier_inputs
from verifier.llm_judge import LlmJudge
from verifier.metrics import classification_report, score_classifier

Write = Callable[[str], None]


def read_evaluation_pairs(claims: Path, corpus: Path | None, data_format: DataFormat) -> list[ClaimDocumentPair]:
    pairs = read_pairs(claims, corpus, data_format)
    if not pairs:
        raise DatasetFormatError(f"{claims} holds no (claim, document) pairs")
    return pairs


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
    reading: ProductReading,
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
    inputs = reading.inputs(pairs)
    whole = verifier_inputs(pairs, None, 0)
    progress("classifying (evidence input)…")
    result: dict[str, Any] = {
        "model": classifier.model_id,
        "input": reading.description,
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


def reads_whole_abstract(folder: str) -> bool:
    """Whether a checkpoint was trained on whole abstracts (its training.json says so); a foreign one is read the
    way the product reads by default, on evidence sentences."""
    summary = Path(folder) / "training.json"
    if not summary.exists():
        return False
    return bool(json.loads(summary.read_text()).get("config", {}).get("input_mode") == "abstract")


def evaluate_verification(
    claims: Path,
    *,
    corpus: Path | None,
    data_format: DataFormat,
    model: str,
    labels: list[str] | None,
    peer_folders: Sequence[str],
    embedder: Embedder,
    evidence_model: Path,
    evidence_sentences: int,
    data_root: Path,
    judge_pairs: int,
    judge_endpoint: LLMSettings,
    serve_judge: str | None,
    model_cache: Path,
    write: Write,
    precision: str = "fp32",
) -> dict[str, Any]:
    """The checkpoint `model` and its peers (each read at `precision`, at the length it was trained at) on the pairs
    of `claims`; the LLM judge on `judge_pairs` of them (0: none) through `judge_endpoint`, or through the packaged
    model `serve_judge` served with llama.cpp for the run."""
    from verifier.cross_encoder import CrossEncoderVerifier  # torch: loaded only when a run needs it

    pairs = read_evaluation_pairs(claims, corpus, data_format)
    classifier = CrossEncoderVerifier.load(model, labels=labels, precision=precision)
    peers = [
        Peer(
            name=Path(folder).name,
            classifier=CrossEncoderVerifier.load(folder, precision=precision),
            whole_abstract=reads_whole_abstract(folder),
        )
        for folder in peer_folders
    ]
    reading = product_reading(embedder, evidence_model, evidence_sentences=evidence_sentences)
    write(f"{len(pairs)} pairs; embedding their sentences…")
    reading.embed(pairs)
    training = read_training_pairs(data_root)
    serving: AbstractContextManager[str | None] = nullcontext(None)
    if judge_pairs and serve_judge:
        write(f"serving {serve_judge} with llama.cpp for the LLM judge…")
        serving = served_model(serve_judge, cache=model_cache, n_ctx=4096)
    with serving as served_url:
        judge = None
        if judge_pairs:
            base_url = served_url or judge_endpoint.base_url
            judge_model = serve_judge or judge_endpoint.model
            judge = LlmJudge(build_llm(replace(judge_endpoint, base_url=base_url, model=judge_model)))
        return {
            "claims": str(claims),
            **run_verification(
                pairs,
                classifier=classifier,
                reading=reading,
                train_labels=[pair.label for pair in training],
                judge=judge,
                judge_pairs=judge_pairs,
                progress=write,
                peers=peers,
                training_documents={pair.document.doc_id for pair in training},
            ),
        }
