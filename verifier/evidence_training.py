"""Training the evidence taggers: one tagging example per (claim, document), 1 on rationale sentences, and the whole
run `manage.py train_evidence` makes.

Pairs without evidence are kept with all-zero labels, since at question time the tagger also reads cited
abstracts that do not bear on the claim and should then mark nothing.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from indexer.base import Embedder
from verifier.cross_encoder import CrossEncoderVerifier
from verifier.datasets import (
    DEV_SPLITS,
    POSITION_ARTIFACT_SPLITS,
    TRAIN_SPLITS,
    ClaimDocumentPair,
    read_split,
    read_training_pairs,
)
from verifier.evidence_model import EvidenceTagger, TaggingExample, late_fusion_features, train_tagger
from verifier.training_run import product_training_pairs
from verifier.vectors import SentenceVectors


def _labels(pair: ClaimDocumentPair) -> tuple[int, ...]:
    rationale = set(pair.rationale)
    return tuple(int(index in rationale) for index in range(len(pair.document.sentences)))


def late_fusion_examples(pairs: Sequence[ClaimDocumentPair], vectors: SentenceVectors) -> list[TaggingExample]:
    vectors.add_pairs(pairs)
    return [
        TaggingExample(
            features=late_fusion_features(vectors.vector(pair.claim), vectors.matrix(pair.document.sentences)),
            labels=_labels(pair),
        )
        for pair in pairs
        if pair.document.sentences
    ]


def early_fusion_examples(pairs: Sequence[ClaimDocumentPair], encoder: CrossEncoderVerifier) -> list[TaggingExample]:
    """The cross-encoder reads every (claim, sentence) of every pair: the costly part, done in one long batch."""
    kept = [pair for pair in pairs if pair.document.sentences]
    flat = [(pair.claim, sentence) for pair in kept for sentence in pair.document.sentences]
    features = encoder.pair_features(flat)
    examples = []
    offset = 0
    for pair in kept:
        size = len(pair.document.sentences)
        examples.append(
            TaggingExample(features=np.ascontiguousarray(features[offset : offset + size]), labels=_labels(pair))
        )
        offset += size
    return examples


def run_tagger_training(
    kind: str,
    data_root: Path,
    output: Path,
    *,
    embedder: Embedder,
    verifier_model: Path,
    epochs: int,
    limit: int | None,
    write: Callable[[str], None],
    product_shaped_pairs: int = 0,
) -> EvidenceTagger:
    """Train a `kind` tagger (late_fusion over `embedder`'s vectors, early_fusion over the readings of the verifier
    in `verifier_model`), choose its threshold on the dev pairs with rationales and save it in `output`.

    `product_shaped_pairs` adds that many answer-like pairs made from training abstracts (`verifier.product_pairs`):
    each knows the sentences its claim rests on, and its negatives mark none. The second seed paper's lesson is that
    many extractive pairs transfer to unseen documents."""
    # Splits whose rationale always sits at one position would teach (and reward) position, not evidence.
    excluded = POSITION_ARTIFACT_SPLITS
    train_pairs = read_training_pairs(data_root, limit=limit, exclude=excluded)
    if product_shaped_pairs:
        shaped = product_training_pairs(data_root, size=product_shaped_pairs, seed=13)
        # Citation-Integrity's abstracts are kept out here as in the gold pairs: their rationale is always the first.
        train_pairs += [item.pair for item in shaped if not item.source_id.startswith("citation_integrity:")]
        write(f"{len(train_pairs):,} training pairs with the product-shaped ones")
    dev_pairs = [
        pair
        for split in DEV_SPLITS
        if split.name not in excluded
        for pair in read_split(data_root, split)
        if pair.rationale
    ]
    started = time.perf_counter()
    if kind == "late_fusion":
        vectors = SentenceVectors(embedder)
        train = late_fusion_examples(train_pairs, vectors)
        dev = late_fusion_examples(dev_pairs, vectors)
    else:
        encoder = CrossEncoderVerifier.load(verifier_model, max_length=128, batch_size=64)
        train = early_fusion_examples(train_pairs, encoder)
        dev = early_fusion_examples(dev_pairs, encoder)
    features_seconds = time.perf_counter() - started
    write(f"{len(train):,} training and {len(dev):,} dev pairs featurised in {features_seconds:.0f} s")
    tagger, history = train_tagger(train, dev, kind=kind, epochs=epochs)
    tagger.save(
        output,
        train_pairs=len(train),
        dev_pairs=len(dev),
        history=history,
        train_splits=[split.name for split in TRAIN_SPLITS if split.name not in excluded]
        + (["product-shaped"] if product_shaped_pairs else []),
        features_seconds=round(features_seconds),
    )
    write(json.dumps(history[-3:]))
    return tagger
