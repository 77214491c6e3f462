"""Compound sentences for measuring the deep check, built deterministically from any SciFact-format claims file.

For each document (in id order), every pair of claims citing it (in claim-id order) whose first claim, A, is SUPPORT
for that document, and whose second, b, has any label for it: the text is A without its final full stop, ", and ",
then b with its first letter lower-cased. It is supported when b is SUPPORT; otherwise b is the part that fails, the
part a sentence-level verdict lets hide behind A.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from verifier.datasets import ClaimDocumentPair, Document, read_scifact_pairs
from verifier.verdicts import SUPPORT

SAMPLE_SEED = 13


@dataclass(frozen=True)
class Compound:
    document: Document
    first_id: str  # A's claim id
    second_id: str  # b's
    first: str
    second: str
    second_label: str  # b's label for the document: SUPPORT, CONTRADICT or NO_EVIDENCE
    text: str

    @property
    def supported(self) -> bool:
        return self.second_label == SUPPORT


def compound_text(first: str, second: str) -> str:
    head = first.strip()
    head = head[:-1] if head.endswith(".") else head
    tail = second.strip()
    return f"{head}, and {tail[:1].lower()}{tail[1:]}"


def _id_order(value: str) -> tuple[int, int, str]:
    """Numeric ids in numeric order (SciFact's), any others after them in text order."""
    return (0, int(value), "") if value.isdigit() else (1, 0, value)


def compounds_from_pairs(pairs: Sequence[ClaimDocumentPair]) -> list[Compound]:
    by_document: dict[str, list[ClaimDocumentPair]] = defaultdict(list)
    for pair in pairs:
        by_document[pair.document.doc_id].append(pair)
    compounds = []
    for doc_id in sorted(by_document, key=_id_order):
        citing = sorted(by_document[doc_id], key=lambda pair: _id_order(pair.claim_id))
        for index, first in enumerate(citing):
            if first.label != SUPPORT:
                continue
            for second in citing[index + 1 :]:
                compounds.append(
                    Compound(
                        document=first.document,
                        first_id=first.claim_id,
                        second_id=second.claim_id,
                        first=first.claim,
                        second=second.claim,
                        second_label=second.label,
                        text=compound_text(first.claim, second.claim),
                    )
                )
    return compounds


def build_compounds(claims: Path, corpus: Path) -> list[Compound]:
    return compounds_from_pairs(read_scifact_pairs(claims, corpus))


def sample_compounds(compounds: Sequence[Compound], limit: int | None, *, seed: int = SAMPLE_SEED) -> list[Compound]:
    """`limit` compounds drawn with `seed`, half supported and half not where both halves have enough (the other
    half fills what one lacks), in their built order; all of them when `limit` is None or not smaller."""
    if limit is None or limit >= len(compounds):
        return list(compounds)
    rng = random.Random(seed)
    supported = [index for index, compound in enumerate(compounds) if compound.supported]
    failing = [index for index, compound in enumerate(compounds) if not compound.supported]
    rng.shuffle(supported)
    rng.shuffle(failing)
    take_supported = min(len(supported), max(limit // 2, limit - len(failing)))
    chosen = supported[:take_supported] + failing[: limit - take_supported]
    return [compounds[index] for index in sorted(chosen)]
