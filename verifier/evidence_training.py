"""Training data for the evidence taggers: one tagging example per (claim, document), 1 on rationale sentences.

Pairs without evidence are kept with all-zero labels, since at question time the tagger also reads cited
abstracts that do not bear on the claim and should then mark nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from verifier.cross_encoder import CrossEncoderVerifier
from verifier.datasets import ClaimDocumentPair
from verifier.evidence_model import TaggingExample, late_fusion_features
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
