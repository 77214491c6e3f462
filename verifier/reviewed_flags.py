"""Reviewers' labelled flags as extra verifier training pairs: the one file `manage.py export_flags --output` writes
and `manage.py train_verifier --extra FILE` reads, and the rules that keep dev and benchmark items out of training.

One JSON object a line, one line per closed flag and abstract it is about:

    {"id": "flag-12", "flag_id": 12, "question_id": 5, "sentence_position": 1,   # provenance
     "question": "Is metformin safe?",                    # what the answer was for (dev questions are dropped)
     "claim": "Metformin did not cause lactic acidosis.", # the flagged sentence, or the deep-check claim flagged
     "doc_id": "111", "title": "...", "abstract": ["sentence", ...],  # the cited abstract, split into sentences
     "label": "SUPPORT",                                  # the reviewer's SUPPORT, CONTRADICT or NO_EVIDENCE
     "evidence_sentences": [1]}                           # abstract sentences the verifier showed; [] if none

The export writes only rows a reviewer labelled; the reader refuses a row without such a label rather than guess
one, naming the file and line.
"""

from __future__ import annotations

import csv
import json
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verifier.datasets import DEV_SPLITS, LABELS, ClaimDocumentPair, DatasetFormatError, Document
from verifier.extra_training import BIOASQ_DEV_QUESTIONS, PUBMEDQA_LABELLED, PUBMEDQA_TEST_IDS
from verifier.verdicts import NO_EVIDENCE

HEALTHVER_DEV_CSV = "healthver/healthver_dev.csv"  # the raw release: the one HealthVer file with its questions

# Why an extra example is left out, in the order the rules are tried (an example counts under the first that applies).
DEV_CLAIM = "dev_claim"  # its claim is a dev claim (so every dev (claim, document) pair is caught here too)
DEV_QUESTION = "dev_question"  # the answer it came from was for a dev or benchmark question
IN_TRAINING = "in_training"  # the same claim against the same abstract is already a training pair
DUPLICATE = "duplicate"  # the same claim against the same abstract came earlier in the extra files
DROP_REASONS = (DEV_CLAIM, DEV_QUESTION, IN_TRAINING, DUPLICATE)


def reviewed_row(
    *,
    flag_id: int,
    question_id: int,
    question: str,
    sentence_position: int,
    claim: str,
    doc_id: str,
    title: str,
    sentences: Sequence[str],
    label: str,
    evidence_sentences: Sequence[int],
) -> dict[str, Any]:
    """One line of the file, as the export writes it."""
    if label not in LABELS:
        raise ValueError(f"flag {flag_id}: {label!r} is not a training label ({', '.join(LABELS)})")
    return {
        "id": f"flag-{flag_id}",
        "flag_id": flag_id,
        "question_id": question_id,
        "sentence_position": sentence_position,
        "question": question,
        "claim": claim,
        "doc_id": doc_id,
        "title": title,
        "abstract": list(sentences),
        "label": label,
        "evidence_sentences": [] if label == NO_EVIDENCE else sorted(set(evidence_sentences)),
    }


@dataclass(frozen=True)
class ReviewedPair:
    pair: ClaimDocumentPair
    question: str


def _string(record: dict[str, Any], name: str, where: str, *, required: bool = True) -> str:
    value = record.get(name, "")
    if not isinstance(value, str | int) or isinstance(value, bool):
        raise DatasetFormatError(f"{where}: field {name!r} must be text")
    text = str(value).strip()
    if required and not text:
        raise DatasetFormatError(f"{where}: missing field {name!r}")
    return text


def _row_pair(record: dict[str, Any], where: str) -> ReviewedPair:
    label = record.get("label")
    if not label:
        raise DatasetFormatError(
            f"{where}: no reviewer label (export only closed flags with a label: {', '.join(LABELS)})"
        )
    if label not in LABELS:
        raise DatasetFormatError(f"{where}: label {label!r} is not a training label ({', '.join(LABELS)})")
    abstract = record.get("abstract")
    if not isinstance(abstract, list) or not abstract or not all(isinstance(s, str) for s in abstract):
        raise DatasetFormatError(f"{where}: field 'abstract' must be a non-empty list of sentences")
    evidence = record.get("evidence_sentences", [])
    if not isinstance(evidence, list) or not all(isinstance(i, int) and 0 <= i < len(abstract) for i in evidence):
        raise DatasetFormatError(f"{where}: 'evidence_sentences' must be indices into the {len(abstract)} sentences")
    document = Document(
        doc_id=_string(record, "doc_id", where),
        title=_string(record, "title", where, required=False),
        sentences=tuple(sentence.strip() for sentence in abstract),
    )
    rationale = () if label == NO_EVIDENCE else tuple(sorted(set(evidence)))
    pair = ClaimDocumentPair(_string(record, "id", where), _string(record, "claim", where), document, label, rationale)
    return ReviewedPair(pair, _string(record, "question", where, required=False))


def read_reviewed_file(path: Path) -> list[ReviewedPair]:
    """Every row of an exported flags file; a malformed or unlabelled row stops the read with its line number."""
    pairs: list[ReviewedPair] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise DatasetFormatError(f"{where}: not JSON ({error.msg})") from error
            if not isinstance(record, dict):
                raise DatasetFormatError(f"{where}: expected a JSON object")
            pairs.append(_row_pair(record, where))
    return pairs


def normalised(text: str) -> str:
    """Casefolded, whitespace collapsed, trailing punctuation gone: "Vitamin D  cures COVID-19." and "vitamin d
    cures covid-19" are the same claim."""
    text = " ".join(text.casefold().split())
    end = len(text)
    while end and (text[end - 1].isspace() or unicodedata.category(text[end - 1]).startswith("P")):
        end -= 1
    return text[:end]


def _pair_key(pair: ClaimDocumentPair) -> tuple[str, str]:
    # The document by its text, not its id: a PubMed abstract is a Semantic Scholar id in SciFact's corpus.
    return normalised(pair.claim), normalised(" ".join((pair.document.title, *pair.document.sentences)))


def _json_field(path: Path, name: str) -> list[str]:
    with path.open(encoding="utf-8") as handle:
        return [str(json.loads(line)[name]) for line in handle if line.strip()]


@dataclass(frozen=True)
class HeldOut:
    """What no extra example may repeat: the claims of every dev split the verifier is selected and evaluated on,
    and the questions of the dev sets and benchmarks answers are measured on."""

    claims: frozenset[str]
    questions: frozenset[str]


def held_out(data_root: Path) -> HeldOut:
    claims = [claim for split in DEV_SPLITS for claim in _json_field(data_root / split.claims, "claim")]
    questions = _json_field(data_root / BIOASQ_DEV_QUESTIONS, "body")  # the retrieval and latency benchmarks
    with (data_root / HEALTHVER_DEV_CSV).open(encoding="utf-8", newline="") as handle:
        questions += [row["question"] for row in csv.DictReader(handle)]
    # PubMedQA's test questions are the first `evaluate generation` answers.
    items = json.loads((data_root / PUBMEDQA_LABELLED).read_text(encoding="utf-8"))
    test_ids = json.loads((data_root / PUBMEDQA_TEST_IDS).read_text(encoding="utf-8"))
    questions += [str(items[pmid]["QUESTION"]) for pmid in test_ids if pmid in items]
    return HeldOut(
        claims=frozenset(normalised(claim) for claim in claims),
        questions=frozenset(normalised(question) for question in questions if question.strip()),
    )


@dataclass
class ExtraFileCount:
    name: str
    read: int = 0
    used: int = 0
    dropped: dict[str, int] = field(default_factory=lambda: dict.fromkeys(DROP_REASONS, 0))

    def summary(self) -> str:
        why = ", ".join(f"{count} {reason.replace('_', ' ')}" for reason, count in self.dropped.items())
        return f"{self.name}: {self.read} extra examples read, {self.used} used; dropped {why}"


def select_reviewed(
    files: Iterable[tuple[str, Sequence[ReviewedPair]]],
    *,
    holdout: HeldOut,
    training: Sequence[ClaimDocumentPair],
) -> tuple[list[ClaimDocumentPair], list[ExtraFileCount]]:
    """The extra examples that may train, in file order, and per file how many were read, used and dropped why.

    The same claim against the same abstract is one example whatever its label: a second reviewer's label for it
    (or a gold one) is either a repeat or a disagreement, and the first (the gold) one stands."""
    seen_in_training = {_pair_key(pair) for pair in training}
    seen: set[tuple[str, str]] = set()
    used: list[ClaimDocumentPair] = []
    counts: list[ExtraFileCount] = []
    for name, pairs in files:
        count = ExtraFileCount(name)
        for reviewed in pairs:
            count.read += 1
            key = _pair_key(reviewed.pair)
            if key[0] in holdout.claims:
                reason = DEV_CLAIM
            elif normalised(reviewed.question) in holdout.questions:
                reason = DEV_QUESTION
            elif key in seen_in_training:
                reason = IN_TRAINING
            elif key in seen:
                reason = DUPLICATE
            else:
                seen.add(key)
                used.append(reviewed.pair)
                count.used += 1
                continue
            count.dropped[reason] += 1
        counts.append(count)
    return used, counts


def extra_report(counts: Sequence[ExtraFileCount]) -> dict[str, object]:
    """What training.json records of the extra files (and the model card states): how many examples were used."""
    dropped: Counter[str] = Counter()
    for count in counts:
        dropped.update(count.dropped)
    return {
        "extra_examples_used": sum(count.used for count in counts),
        "extra_examples_dropped": {reason: dropped[reason] for reason in DROP_REASONS},
        "extra_files": [
            {"file": count.name, "read": count.read, "used": count.used, "dropped": count.dropped} for count in counts
        ],
    }
