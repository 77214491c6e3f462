"""Training groups for the reranker from the BioASQ golden sets 7B-11B, with the benchmark's questions kept out.

A group is a question, one positive passage and a few negatives; the model learns to score the positive above the
negatives (softmax over the group). Positives are the questions' gold snippets: few gold documents have abstracts in
the shared data, so whole gold abstracts cannot be used. Negatives are of two kinds:
- hard: passages of the abstracts our own hybrid search ranks highest for the question, gold PMIDs excluded: a
  random window of whole sentences (or the title) packed to about the positive's length, so that length never gives
  the answer away;
- topical-but-wrong: a gold snippet of another question, which teaches that sounding biomedical is not enough.

Held-out data never enters. A question is left out when its id (or its wording) is one of the retrieval
benchmark's dev questions, and when any of its gold PMIDs is in the benchmark corpus: those documents belong to the
benchmark's questions, dev and held-out alike, and a question about them would teach the held-out answers.
"""

from __future__ import annotations

import gzip
import json
import random
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from indexer.passages import packed_windows
from indexer.sentences import sentence_texts

BIOASQ_GOLDEN = "bioasq/golden"
BENCHMARK_DEV_QUESTIONS = "bioasq/benchmark/questions_dev.jsonl"
BENCHMARK_CORPUS = "bioasq/benchmark/corpus.jsonl.gz"
POSITIVES_PER_QUESTION = 4
MIN_WINDOW_WORDS = 12
_PMID_IN_URL = re.compile(r"(\d+)\s*$")


@dataclass(frozen=True)
class GoldenQuestion:
    id: str
    body: str
    gold_pmids: frozenset[str]
    snippets: tuple[str, ...]


@dataclass(frozen=True)
class TrainingGroup:
    question_id: str
    query: str
    positive: str
    negatives: tuple[str, ...]


def normalised_wording(text: str) -> str:
    return " ".join(text.lower().split()).rstrip("?.! ")


def golden_questions(data_root: Path) -> list[GoldenQuestion]:
    """Every question of the golden sets, each id once (its first appearance), in file order."""
    seen: dict[str, GoldenQuestion] = {}
    for path in sorted((data_root / BIOASQ_GOLDEN).glob("*_golden.json")):
        for item in json.loads(path.read_text(encoding="utf-8"))["questions"]:
            if item["id"] in seen:
                continue
            snippets = (" ".join(str(snippet["text"]).split()) for snippet in item.get("snippets", []))
            seen[item["id"]] = GoldenQuestion(
                id=str(item["id"]),
                body=" ".join(str(item["body"]).split()),
                gold_pmids=frozenset(_pmid(url) for url in item.get("documents", []) if _pmid(url)),
                snippets=tuple(dict.fromkeys(text for text in snippets if text)),
            )
    return list(seen.values())


def _pmid(url: str) -> str:
    match = _PMID_IN_URL.search(str(url))
    return match.group(1) if match else ""


@dataclass(frozen=True)
class HeldOut:
    """What identifies the benchmark's questions: dev ids and wordings, and the benchmark corpus's PMIDs."""

    question_ids: frozenset[str]
    wordings: frozenset[str]
    benchmark_pmids: frozenset[str]

    @classmethod
    def read(cls, data_root: Path) -> HeldOut:
        with (data_root / BENCHMARK_DEV_QUESTIONS).open(encoding="utf-8") as handle:
            dev = [json.loads(line) for line in handle if line.strip()]
        with gzip.open(data_root / BENCHMARK_CORPUS, "rt", encoding="utf-8") as handle:
            pmids = frozenset(str(json.loads(line)["pmid"]) for line in handle if line.strip())
        return cls(
            question_ids=frozenset(str(item["id"]) for item in dev),
            wordings=frozenset(normalised_wording(str(item["body"])) for item in dev),
            benchmark_pmids=pmids,
        )

    def excludes(self, question: GoldenQuestion) -> bool:
        return (
            question.id in self.question_ids
            or normalised_wording(question.body) in self.wordings
            or not question.gold_pmids.isdisjoint(self.benchmark_pmids)
        )


def training_questions(data_root: Path) -> list[GoldenQuestion]:
    """The golden questions the reranker may learn from: snippets to learn from, and none of the held-out ones."""
    held_out = HeldOut.read(data_root)
    return [
        question for question in golden_questions(data_root) if question.snippets and not held_out.excludes(question)
    ]


Search = Callable[[str], Sequence[str]]  # a query's PMIDs, best first


def mine_hard_negatives(
    questions: Iterable[GoldenQuestion], search: Search, *, depth: int = 20
) -> dict[str, list[str]]:
    """Per question, the PMIDs our search ranks in its top `depth` that are not among the question's gold PMIDs."""
    return {
        question.id: [pmid for pmid in list(search(question.body))[:depth] if pmid not in question.gold_pmids]
        for question in questions
    }


def training_groups(
    questions: Sequence[GoldenQuestion],
    hard_negatives: Mapping[str, Sequence[str]],
    abstracts: Mapping[str, tuple[str, str]],
    *,
    hard_per_group: int = 2,
    positives_per_question: int = POSITIVES_PER_QUESTION,
    seed: int = 13,
) -> list[TrainingGroup]:
    """One group per positive (up to `positives_per_question` snippets per question): the snippet, `hard_per_group`
    hard-negative passages from different abstracts, and one gold snippet of another question.

    `abstracts` maps a PMID to its (title, abstract); hard negatives without one are skipped."""
    rng = random.Random(seed)
    sentences: dict[str, list[str]] = {}

    def passage_of(pmid: str, words: int) -> str:
        """A random window of the abstract, packed to about `words` words (the positive's length)."""
        title, abstract = abstracts[pmid]
        if pmid not in sentences:
            sentences[pmid] = sentence_texts(abstract)
        return rng.choice(packed_windows(title, sentences[pmid], max_words=max(words, MIN_WINDOW_WORDS)) or [title])

    groups: list[TrainingGroup] = []
    for question in questions:
        candidates = [pmid for pmid in hard_negatives.get(question.id, ()) if pmid in abstracts]
        if len(candidates) < hard_per_group:
            continue
        for positive in question.snippets[:positives_per_question]:
            hard = [passage_of(pmid, len(positive.split())) for pmid in rng.sample(candidates, hard_per_group)]
            other = questions[rng.randrange(len(questions))]
            while other.id == question.id:
                other = questions[rng.randrange(len(questions))]
            groups.append(TrainingGroup(question.id, question.body, positive, (*hard, rng.choice(other.snippets))))
    rng.shuffle(groups)
    return groups


def write_groups(groups: Iterable[TrainingGroup], path: Path) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("w", encoding="utf-8") as handle:
        for group in groups:
            handle.write(json.dumps(group.__dict__ | {"negatives": list(group.negatives)}) + "\n")
            count += 1
    return count


def read_groups(path: Path) -> list[TrainingGroup]:
    groups: list[TrainingGroup] = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                item: dict[str, Any] = json.loads(line)
                groups.append(TrainingGroup(**(item | {"negatives": tuple(item["negatives"])})))
    return groups
