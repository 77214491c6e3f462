"""Claim-verification data: every SciFact-format release in shared/data and the raw HealthVer CSV, read as
(claim, document) pairs with one label and the rationale sentence indices.

The releases differ in small ways this module absorbs: the cited documents are `doc_ids` or `cited_doc_ids`,
the contradicting label is `CONTRADICT` or `REFUTE`, corpora are gzipped or not and documents carry a title or
not. A cited document with no evidence entry is NO_EVIDENCE, as the VerifAI thesis built its pairs.
"""

from __future__ import annotations

import csv
import gzip
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from indexer.sentences import sentence_texts
from verifier.verdicts import CONTRADICT, NO_EVIDENCE, SUPPORT

LABELS: tuple[str, str, str] = (SUPPORT, CONTRADICT, NO_EVIDENCE)
DataFormat = Literal["scifact", "healthver-csv"]

_LABEL_NAMES = {
    "SUPPORT": SUPPORT,
    "SUPPORTS": SUPPORT,
    "CONTRADICT": CONTRADICT,
    "REFUTE": CONTRADICT,
    "REFUTES": CONTRADICT,
    "NEI": NO_EVIDENCE,
    "NOT ENOUGH INFO": NO_EVIDENCE,
    "NEUTRAL": NO_EVIDENCE,
    "NO_EVIDENCE": NO_EVIDENCE,
}


class DatasetFormatError(ValueError):
    """A claims or corpus file that does not have the expected shape; the message names the file and line."""


# Citation-Integrity's citing sentences keep the citation slots as markers ("…in cirrhotic patients[<|multi_cit|>].");
# they average ten tokens a claim and never occur in an answer, so they are read out with the space before them.
_CITATION_MARKER = re.compile(r"\s*\[?<\|[a-z_]+\|>\]?")


def claim_text(raw: str) -> str:
    """A claim as the verifier reads it: citation-slot markers removed, outer spaces stripped."""
    return re.sub(r"\s+([.,;:])", r"\1", _CITATION_MARKER.sub("", raw)).strip()


def normalise_label(raw: str) -> str:
    try:
        return _LABEL_NAMES[raw.strip().upper()]
    except KeyError:
        raise DatasetFormatError(f"unknown label {raw!r}") from None


@dataclass(frozen=True)
class Document:
    doc_id: str
    title: str
    sentences: tuple[str, ...]


@dataclass(frozen=True)
class ClaimDocumentPair:
    claim_id: str
    claim: str
    document: Document
    label: str  # SUPPORT, CONTRADICT or NO_EVIDENCE
    rationale: tuple[int, ...]  # sentence indices that carry the evidence; empty for NO_EVIDENCE


def _json_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise DatasetFormatError(f"{path}:{number}: not JSON ({error.msg})") from error
            if not isinstance(record, dict):
                raise DatasetFormatError(f"{path}:{number}: expected a JSON object")
            yield number, record


def read_corpus(path: Path) -> dict[str, Document]:
    documents: dict[str, Document] = {}
    for number, record in _json_lines(path):
        try:
            abstract = record["abstract"]
            doc_id = str(record["doc_id"])
        except KeyError as error:
            raise DatasetFormatError(f"{path}:{number}: missing field {error.args[0]!r}") from error
        sentences = abstract if isinstance(abstract, list) else sentence_texts(str(abstract))
        documents[doc_id] = Document(
            doc_id=doc_id,
            title=str(record.get("title") or "").strip(),
            sentences=tuple(str(sentence).strip() for sentence in sentences),
        )
    return documents


def read_scifact_pairs(claims_path: Path, corpus_path: Path) -> list[ClaimDocumentPair]:
    """One pair per (claim, cited document); a claim without cited documents gives none."""
    corpus = read_corpus(corpus_path)
    pairs: list[ClaimDocumentPair] = []
    for number, record in _json_lines(claims_path):
        if "claim" not in record:
            raise DatasetFormatError(f"{claims_path}:{number}: missing field 'claim'")
        evidence: dict[str, list[dict[str, Any]]] = {str(k): v for k, v in (record.get("evidence") or {}).items()}
        cited = [str(doc) for doc in (record.get("doc_ids") or record.get("cited_doc_ids") or [])]
        for doc_id in dict.fromkeys([*cited, *evidence]):
            document = corpus.get(doc_id)
            if document is None:
                raise DatasetFormatError(f"{claims_path}:{number}: document {doc_id} is not in {corpus_path}")
            sets = evidence.get(doc_id, [])
            label = normalise_label(sets[0]["label"]) if sets else NO_EVIDENCE
            rationale = sorted({int(index) for entry in sets for index in entry.get("sentences", [])})
            pairs.append(
                ClaimDocumentPair(
                    claim_id=str(record.get("id", number)),
                    claim=claim_text(str(record["claim"])),
                    document=document,
                    label=label,
                    rationale=tuple(index for index in rationale if index < len(document.sentences)),
                )
            )
    return pairs


def read_healthver_csv(path: Path) -> list[ClaimDocumentPair]:
    """HealthVer's raw release: each row is a claim against an evidence passage (no title, no rationale)."""
    pairs: list[ClaimDocumentPair] = []
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = {"id", "evidence", "claim", "label"} - set(reader.fieldnames or [])
        if missing:
            raise DatasetFormatError(f"{path}: missing columns {sorted(missing)}")
        for row in reader:
            passage = sentence_texts(row["evidence"])
            pairs.append(
                ClaimDocumentPair(
                    claim_id=row["id"],
                    claim=row["claim"].strip(),
                    document=Document(doc_id=f"healthver:{row['id']}", title="", sentences=tuple(passage)),
                    label=normalise_label(row["label"]),
                    rationale=(),
                )
            )
    return pairs


def read_pairs(claims_path: Path, corpus_path: Path | None, data_format: DataFormat) -> list[ClaimDocumentPair]:
    if data_format == "healthver-csv":
        return read_healthver_csv(claims_path)
    if corpus_path is None:
        raise DatasetFormatError("the scifact format needs --corpus")
    return read_scifact_pairs(claims_path, corpus_path)


@dataclass(frozen=True)
class Split:
    name: str
    claims: str  # relative to the data root
    corpus: str


# The training and dev splits in shared/data; the verifier is trained on the first group, selected on the second.
TRAIN_SPLITS = (
    Split("scifact", "scifact/claims_train.jsonl", "scifact/corpus.jsonl.gz"),
    Split("healthver", "healthver/claims_train.jsonl", "healthver/corpus.jsonl"),
    Split("covidfact", "covidfact/claims_train.jsonl", "covidfact/corpus.jsonl"),
    Split("citation_integrity", "citation_integrity/claims_train.jsonl", "citation_integrity/corpus.jsonl"),
)
DEV_SPLITS = (
    Split("scifact", "scifact/claims_dev.jsonl", "scifact/corpus.jsonl.gz"),
    Split("healthver", "healthver/claims_dev.jsonl", "healthver/corpus.jsonl"),
    Split("citation_integrity", "citation_integrity/claims_dev.jsonl", "citation_integrity/corpus.jsonl"),
)


# Citation-Integrity marks sentence 0 as the rationale in every pair (train and dev), so a tagger trained or selected
# on it learns "pick the first sentence" (F1 0.96 there against 0.37 for the cosine baseline). The evidence tagger
# leaves it out of both; the verifier keeps its labels, which do not depend on where the evidence sits.
POSITION_ARTIFACT_SPLITS = frozenset({"citation_integrity"})


def read_split(data_root: Path, split: Split) -> list[ClaimDocumentPair]:
    return read_scifact_pairs(data_root / split.claims, data_root / split.corpus)


def read_training_pairs(
    data_root: Path, *, limit: int | None = None, exclude: frozenset[str] = frozenset()
) -> list[ClaimDocumentPair]:
    """The pairs of every training split not in `exclude`; `limit` keeps an evenly spaced subset of that size (a
    quick run)."""
    pairs = [pair for split in TRAIN_SPLITS if split.name not in exclude for pair in read_split(data_root, split)]
    if limit:
        pairs = pairs[:: max(1, len(pairs) // limit)][:limit]
    return pairs
