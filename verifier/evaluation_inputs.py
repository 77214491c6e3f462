"""Classifier inputs built offline the way the product builds them at question time, for evaluating the verifier
and for fitting its decision rule: both must see what the product will show it, never the gold rationale.

The evidence finder scores each document's sentences and the classifier reads the claim against the title + the top
few; a checkpoint trained on whole abstracts reads the title + the whole abstract.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from indexer.base import Embedder
from verifier.base import EvidenceFinder, EvidenceFinderOptions
from verifier.datasets import DEV_SPLITS, ClaimDocumentPair, read_split
from verifier.pairs import verifier_passage
from verifier.registry import build_evidence_finder
from verifier.vectors import SentenceVectors


def verifier_inputs(
    pairs: Sequence[ClaimDocumentPair],
    finder: EvidenceFinder | None,
    evidence_sentences: int,
    *,
    document_order: bool = False,
) -> list[tuple[str, str]]:
    """(claim, passage) as the product builds them; `finder` None gives the whole abstract. `document_order` puts
    the chosen sentences back in the abstract's order, as the product did before they were read best first."""
    inputs = []
    for pair in pairs:
        sentences = pair.document.sentences
        chosen = None
        if finder is not None:
            scores = finder.scores(pair.claim, sentences)
            chosen = sorted(range(len(sentences)), key=lambda index: (-scores[index], index))[:evidence_sentences]
            if document_order:
                chosen.sort()
        inputs.append((pair.claim, verifier_passage(pair.document.title, sentences, chosen)))
    return inputs


@dataclass(frozen=True)
class ProductReading:
    """How the product reads a pair: the sentence vectors its evidence finder uses, the finder (None: the whole
    abstract) and how many top sentences the classifier sees."""

    vectors: SentenceVectors
    finder: EvidenceFinder | None
    evidence_sentences: int

    @property
    def description(self) -> str:
        if self.finder is None:
            return "title + whole abstract"
        return f"title + top {self.evidence_sentences} sentences by {self.finder.model_id}"

    def embed(self, pairs: Sequence[ClaimDocumentPair]) -> None:
        """Embed every claim and sentence in large batches up front (one at a time is several times slower)."""
        self.vectors.add_pairs(pairs)

    def inputs(self, pairs: Sequence[ClaimDocumentPair], *, document_order: bool = False) -> list[tuple[str, str]]:
        self.embed(pairs)
        return verifier_inputs(pairs, self.finder, self.evidence_sentences, document_order=document_order)


def product_reading(
    embedder: Embedder, evidence_model: Path, *, evidence_sentences: int, whole_abstract: bool = False
) -> ProductReading:
    """The evidence tagger saved in `evidence_model` (BM25 + cosine ranking where none was trained) over `embedder`'s
    sentence vectors."""
    vectors = SentenceVectors(embedder)
    finder = (
        None
        if whole_abstract
        else build_evidence_finder(EvidenceFinderOptions(kind="auto", folder=evidence_model, vectors=vectors))
    )
    return ProductReading(vectors=vectors, finder=finder, evidence_sentences=evidence_sentences)


class LogitClassifier(Protocol):
    def logits(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray: ...


def dev_logits(
    classifier: LogitClassifier, reading: ProductReading, data_root: Path, *, write: Callable[[str], None]
) -> dict[str, tuple[np.ndarray, list[str]]]:
    """Per dev split: the classifier's logits on its pairs read the product's way, and the gold labels."""
    dev = {}
    for split in DEV_SPLITS:
        pairs = read_split(data_root, split)
        inputs = reading.inputs(pairs)
        write(f"{split.name}: {len(pairs)} dev pairs; classifying…")
        dev[split.name] = (classifier.logits(inputs), [pair.label for pair in pairs])
    return dev
