"""More verifier training pairs from data the verifier was not trained on before: BioASQ yes/no questions with
their snippets, PubMedQA's labelled yes/no questions with their abstracts, and counterfactual contradictions.

Every question is rewritten into the claim a "yes" would make (`claim_rewriting`). A "yes" pairs it with its
evidence as SUPPORT, a "no" as CONTRADICT; BioASQ's NO_EVIDENCE pairs put a question against the snippets of the
most similar other question (same topic, other finding), which look like real evidence but do not answer it.
Held-out data never enters: BioASQ questions of the retrieval benchmark's dev split and PubMedQA's official test
ids are excluded here, by id.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from indexer.reranker_data import HeldOut, golden_questions
from indexer.sentences import sentence_texts
from verifier.claim_rewriting import question_to_claim
from verifier.counterfactuals import counterfactual, drug_like_terms
from verifier.datasets import ClaimDocumentPair, Document
from verifier.verdicts import CONTRADICT, NO_EVIDENCE, SUPPORT

BIOASQ_GOLDEN = "bioasq/golden"
BIOASQ_DEV_QUESTIONS = "bioasq/benchmark/questions_dev.jsonl"
PUBMEDQA_LABELLED = "pubmedqa/ori_pqal.json"
PUBMEDQA_TEST_IDS = "pubmedqa/test_ground_truth.json"
SNIPPETS_PER_PAIR = 4
_WORD = re.compile(r"[a-z0-9]{3,}")


def dev_question_ids(data_root: Path) -> set[str]:
    with (data_root / BIOASQ_DEV_QUESTIONS).open(encoding="utf-8") as handle:
        return {str(json.loads(line)["id"]) for line in handle if line.strip()}


def benchmark_question_ids(data_root: Path) -> set[str]:
    """The golden questions the verifier may not learn from: the benchmark's dev questions (by id or wording) and
    any whose gold abstracts are in the benchmark corpus, which belong to its questions, dev and held-out alike (the
    reranker's and the distillation's sets leave the same ones out)."""
    held_out = HeldOut.read(data_root)
    return {question.id for question in golden_questions(data_root) if held_out.excludes(question)}


def bioasq_yes_no_questions(data_root: Path) -> list[dict[str, Any]]:
    """Every yes/no question of the golden sets 7B-11B (each id once), in file order."""
    seen: dict[str, dict[str, Any]] = {}
    for path in sorted((data_root / BIOASQ_GOLDEN).glob("*_golden.json")):
        for question in json.loads(path.read_text(encoding="utf-8"))["questions"]:
            if question.get("type") == "yesno" and question["id"] not in seen:
                seen[question["id"]] = question
    return list(seen.values())


def question_snippets(question: dict[str, Any]) -> tuple[str, ...]:
    texts = [" ".join(str(snippet["text"]).split()) for snippet in question.get("snippets", [])]
    return tuple(dict.fromkeys(text for text in texts if text))[:SNIPPETS_PER_PAIR]


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def bioasq_pairs(data_root: Path, *, exclude_ids: set[str], seed: int = 13) -> list[ClaimDocumentPair]:
    """SUPPORT ("yes") or CONTRADICT ("no") against the question's snippets, plus one NO_EVIDENCE pair per
    question against the snippets of its most word-similar other question."""
    questions = [
        question
        for question in bioasq_yes_no_questions(data_root)
        if question["id"] not in exclude_ids and question_snippets(question)
    ]
    rng = random.Random(seed)
    snippets = [question_snippets(question) for question in questions]
    words = [_words(question["body"]) for question in questions]
    snippet_words = [_words(" ".join(texts)) for texts in snippets]
    pairs: list[ClaimDocumentPair] = []
    for index, question in enumerate(questions):
        claim = question_to_claim(question["body"])
        answer = str(question.get("exact_answer", "")).strip().lower()
        if claim is None or answer not in ("yes", "no"):
            continue
        document = Document(doc_id=f"bioasq:{question['id']}", title="", sentences=snippets[index])
        label = SUPPORT if answer == "yes" else CONTRADICT
        pairs.append(ClaimDocumentPair(question["id"], claim, document, label, tuple(range(len(snippets[index])))))
        overlaps = [
            (len(words[index] & words[other]) / (len(words[index] | words[other]) or 1), rng.random(), other)
            for other in range(len(questions))
            # another question's snippets that contain every word of this one might well answer it
            if other != index and not snippet_words[other] >= words[index]
        ]
        if overlaps:
            other = max(overlaps)[2]
            distractor = Document(doc_id=f"bioasq:{questions[other]['id']}", title="", sentences=snippets[other])
            pairs.append(ClaimDocumentPair(question["id"], claim, distractor, NO_EVIDENCE, ()))
    return pairs


def pubmedqa_pairs(data_root: Path) -> list[ClaimDocumentPair]:
    """PQA-L yes/no items outside the official test ids: the question's claim against its abstract (the contexts
    and the conclusion, as the published abstract reads), with no rationale marked."""
    items: dict[str, dict[str, Any]] = json.loads((data_root / PUBMEDQA_LABELLED).read_text(encoding="utf-8"))
    test_ids = set(json.loads((data_root / PUBMEDQA_TEST_IDS).read_text(encoding="utf-8")))
    pairs: list[ClaimDocumentPair] = []
    for pmid, item in items.items():
        if not pubmedqa_trains_on(pmid, item, test_ids):
            continue
        decision = str(item["final_decision"]).lower()
        claim = question_to_claim(str(item["QUESTION"]))
        assert claim is not None  # pubmedqa_trains_on read it
        text = " ".join([*item.get("CONTEXTS", []), str(item.get("LONG_ANSWER", ""))])
        document = Document(doc_id=f"pubmed:{pmid}", title="", sentences=tuple(sentence_texts(text)))
        pairs.append(
            ClaimDocumentPair(f"pubmedqa:{pmid}", claim, document, SUPPORT if decision == "yes" else CONTRADICT, ())
        )
    return pairs


def pubmedqa_trains_on(pmid: str, item: dict[str, Any], test_ids: set[str]) -> bool:
    """Whether `pubmedqa_pairs` makes a training pair of this PQA-L item: a yes or no outside the test ids whose
    question the rewrite reads. The items it does not train on are the bottom line's PubMedQA dev questions."""
    decision = str(item.get("final_decision", "")).lower()
    return pmid not in test_ids and decision in ("yes", "no") and question_to_claim(str(item["QUESTION"])) is not None


def counterfactual_pairs(
    pairs: Sequence[ClaimDocumentPair], *, fraction: float, seed: int = 13
) -> list[ClaimDocumentPair]:
    """For `fraction` of the SUPPORT pairs (seeded), the same document against an edited claim, as CONTRADICT."""
    rng = random.Random(seed)
    supported = [pair for pair in pairs if pair.label == SUPPORT]
    vocabulary = drug_like_terms([pair.claim for pair in supported])
    made: list[ClaimDocumentPair] = []
    for pair in supported:
        if rng.random() >= fraction:
            continue
        edited = counterfactual(pair.claim, rng, vocabulary)
        if edited is None:
            continue
        made.append(
            ClaimDocumentPair(
                f"{pair.claim_id}:cf-{edited.kind}", edited.claim, pair.document, CONTRADICT, pair.rationale
            )
        )
    return made


def label_counts(pairs: Iterable[ClaimDocumentPair]) -> dict[str, int]:
    return dict(Counter(pair.label for pair in pairs))
