"""Distilling a large verifier (the teacher) into a small one (the student) that reads pairs at page speed.

The student learns the teacher's soft label distribution on two kinds of pairs:
- the gold training examples, where it also learns the gold label (`alpha` weighs the two);
- transfer pairs that look like what the product verifies and carry no gold label: BioASQ's expert-written ideal
  answers, one sentence at a time (answer sentences like the product's own), against the snippets of their own
  question (the abstracts the answer rests on), against the snippets of the most word-similar other question
  (same topic, another finding), and counterfactual edits of them against their own snippets.

Held-out data never enters the transfer set: the questions the reranker may not learn from either (the BioASQ dev
split by id and by wording, and every question whose gold abstracts are in the benchmark corpus, which holds the
hidden test questions' gold too: `indexer.reranker_data.training_questions`), HealthVer dev and PubMedQA test
questions, and any answer sentence that is a dev claim (`reviewed_flags.held_out`).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from indexer.reranker_data import training_questions
from indexer.sentences import sentence_texts
from verifier.counterfactuals import counterfactual, drug_like_terms
from verifier.datasets import LABELS, ClaimDocumentPair, Document
from verifier.decision import softmax
from verifier.extra_training import BIOASQ_GOLDEN, question_snippets
from verifier.reviewed_flags import HeldOut, held_out, normalised
from verifier.verdicts import NO_EVIDENCE

TEACHER_FILE = "teacher_probabilities.npz"  # the teacher's labels, kept in the student's folder while it trains
MIN_SENTENCE_WORDS = 5  # "Yes." and "BRCA1 and BRCA2." are answers, not claims a verifier can judge
SENTENCES_PER_ANSWER = 3
_TRANSFER_LABEL = NO_EVIDENCE  # a transfer pair's label field; it carries no gold and never enters the gold loss


@dataclass(frozen=True)
class TransferCounts:
    questions_read: int
    questions_held_out: int
    pairs: int

    def summary(self) -> str:
        return (
            f"transfer pairs: {self.pairs:,} from {self.questions_read - self.questions_held_out:,} BioASQ questions "
            f"({self.questions_held_out:,} dev, benchmark or snippet-less questions left out)"
        )


def golden_records(data_root: Path) -> list[dict[str, Any]]:
    """Every question of the golden sets 7B-11B, each id once, in file order."""
    seen: dict[str, dict[str, Any]] = {}
    for path in sorted((data_root / BIOASQ_GOLDEN).glob("*_golden.json")):
        for question in json.loads(path.read_text(encoding="utf-8"))["questions"]:
            seen.setdefault(str(question["id"]), question)
    return list(seen.values())


def _snippet_document(question: dict[str, Any]) -> Document | None:
    sentences = question_snippets(question)
    return Document(doc_id=f"bioasq:{question['id']}", title="", sentences=sentences) if sentences else None


def _answer_sentences(question: dict[str, Any], holdout: HeldOut) -> list[str]:
    ideal = question.get("ideal_answer", [])
    texts = [ideal] if isinstance(ideal, str) else [str(text) for text in ideal]
    sentences: list[str] = []
    for text in texts[:1]:  # further ideal answers restate the first
        for sentence in sentence_texts(" ".join(text.split())):
            if len(sentence.split()) >= MIN_SENTENCE_WORDS and normalised(sentence) not in holdout.claims:
                sentences.append(sentence)
    return sentences[:SENTENCES_PER_ANSWER]


def transfer_pairs(data_root: Path, *, seed: int = 13) -> tuple[list[ClaimDocumentPair], TransferCounts]:
    """Unlabelled realistic pairs for the teacher to label (see the module's docstring)."""
    holdout = held_out(data_root)
    allowed = {question.id for question in training_questions(data_root)}
    questions = golden_records(data_root)
    kept: list[tuple[dict[str, Any], Document, list[str]]] = []
    left_out = 0
    for question in questions:
        if str(question["id"]) not in allowed or normalised(str(question.get("body", ""))) in holdout.questions:
            left_out += 1
            continue
        document = _snippet_document(question)
        sentences = _answer_sentences(question, holdout)
        if document is not None and sentences:
            kept.append((question, document, sentences))
    rng = random.Random(seed)
    vocabulary = drug_like_terms([sentence for _, _, sentences in kept for sentence in sentences])
    body_words = [_words(str(question["body"])) for question, _, _ in kept]
    pairs: list[ClaimDocumentPair] = []
    for index, (question, document, sentences) in enumerate(kept):
        other = _most_similar(index, body_words, rng)
        for number, sentence in enumerate(sentences):
            key = f"bioasq:{question['id']}:{number}"
            pairs.append(ClaimDocumentPair(key, sentence, document, _TRANSFER_LABEL, ()))
            if other is not None:
                pairs.append(ClaimDocumentPair(f"{key}:other", sentence, kept[other][1], _TRANSFER_LABEL, ()))
            edited = counterfactual(sentence, rng, vocabulary)
            if edited is not None:
                pairs.append(ClaimDocumentPair(f"{key}:cf-{edited.kind}", edited.claim, document, _TRANSFER_LABEL, ()))
    return pairs, TransferCounts(questions_read=len(questions), questions_held_out=left_out, pairs=len(pairs))


def _words(text: str) -> set[str]:
    # Hyphenated terms count by their parts ("loss-of-function"): answers and questions hyphenate inconsistently.
    return {word for word in normalised(text).replace("-", " ").split() if len(word) > 2}


def _most_similar(index: int, words: Sequence[set[str]], rng: random.Random) -> int | None:
    best: tuple[float, float, int] | None = None
    for other, candidate in enumerate(words):
        if other == index:
            continue
        overlap = len(words[index] & candidate) / (len(words[index] | candidate) or 1)
        scored = (overlap, rng.random(), other)
        if best is None or scored > best:
            best = scored
    return None if best is None else best[2]


def soft_targets(logits: np.ndarray, temperature: float) -> np.ndarray:
    """The teacher's label distribution at the distillation temperature (a higher one shows more of its doubt)."""
    return softmax(logits / temperature).astype(np.float32)


def pairs_digest(pairs: Iterable[tuple[str, str]], teacher: str) -> str:
    """What the teacher's labels were computed for: a stored file for other pairs or another teacher is not reused."""
    digest = hashlib.sha256(teacher.encode())
    for claim, passage in pairs:
        digest.update(claim.encode())
        digest.update(b"\0")
        digest.update(passage.encode())
        digest.update(b"\1")
    return digest.hexdigest()


class TeacherLogits:
    """The teacher's logits for the student's pairs, computed once and kept in the student's folder: labelling tens
    of thousands of pairs with a 110M-parameter model takes half an hour on two cores, and a resumed run
    should not pay it again."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / TEACHER_FILE

    def load(self, digest: str) -> np.ndarray | None:
        if not self.path.exists():
            return None
        with np.load(self.path) as stored:
            if str(stored["digest"]) != digest:
                return None
            return np.asarray(stored["logits"], dtype=np.float32)

    def save(self, digest: str, logits: np.ndarray) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_name(self.path.name + ".partial.npz")
        np.savez(partial, digest=np.array(digest), logits=logits.astype(np.float32))
        partial.replace(self.path)


def teacher_label_order(labels: Sequence[str]) -> list[int]:
    """Column indices that put a checkpoint's logits into LABELS order (the student's)."""
    if sorted(labels) != sorted(LABELS):
        raise ValueError(f"the teacher's labels {list(labels)} are not {list(LABELS)}")
    return [list(labels).index(label) for label in LABELS]
