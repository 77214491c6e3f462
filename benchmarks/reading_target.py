"""Which abstract should the answer LLM read for the bottom line? How often each way of choosing picks the own one.

    .venv/bin/python benchmarks/reading_target.py --json var/benchmarks/reading-target.json

The bottom line asks the answer LLM about one retrieved abstract (`verifier.bottom_line.closest_pmid`: the one the
dense search found closest among the ten the verifier reads). On PubMedQA a question has one abstract that answers it,
its own, so a choice is right when it picks that one. Compared here, on the same retrieval as `evaluate answers`
(the product's hybrid search over the same index, PQA-L and the benchmark corpora; it is built, or reused, under
`var/eval/answers`), for PubMedQA's dev questions only (PQA-L outside the official test ids, and the extra
PubMedQA-style items; the test split is never read):
- `dense`: the closest by the dense search's score among the abstracts the consensus reads: the first ten fused and
  the dense leg's closest candidate when fusion ranked it below them (`verifier.consensus.pmids_to_read`; what the
  product reads since 2026-11-29);
- `dense_first_ten`: the closest by the dense score among the first ten fused alone (what the product read before);
- `fused_first`: the first of the fused ranking;
- `reranker`: the highest score of the trained reranker (`indexer/models/verimed-minilm-reranker`, the search
  setting `rerank`'s model), title and abstract against the question;
- `dense_and_reranker`: the highest sum of the two scores, each standardised over the ten.
`own_not_read` counts the questions whose own abstract is not among those read (the ten and the closest candidate),
which no choice among them can mend; `own_not_in_ten` those whose own abstract is not among the first ten fused.
Prints a table and writes JSON. No language model runs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")

import django

django.setup()

from django.conf import settings  # noqa: E402

from generator.evaluation import index_search  # noqa: E402
from indexer.base import FusedHit  # noqa: E402
from indexer.evaluation_index import EvaluationIndex  # noqa: E402
from indexer.hybrid import HybridSettings, candidates_settings  # noqa: E402
from verifier.answer_evaluation import AnswerSets, set_indexes, wilson_interval  # noqa: E402
from verifier.bottom_line import closest_pmid, retrieved_abstracts, vote_relevance  # noqa: E402
from verifier.consensus import CONSENSUS_ABSTRACTS, hits_to_read  # noqa: E402
from verifier.yes_no_sets import YesNoQuestion  # noqa: E402
from webapp.corpus import engines  # noqa: E402
from webapp.ops.management.commands.evaluate import answers_index_root  # noqa: E402


def _standardised(values: np.ndarray) -> np.ndarray:
    standardised: np.ndarray = (values - values.mean()) / (values.std() + 1e-9)
    return standardised


# The alternatives to the product's choice (`dense`, read by `closest_pmid` itself), by index among the ten.
ALTERNATIVES: dict[str, Callable[[np.ndarray, np.ndarray], int]] = {
    "fused_first": lambda dense, reranker: 0,
    "reranker": lambda dense, reranker: int(np.argmax(reranker)),
    "dense_and_reranker": lambda dense, reranker: int(np.argmax(_standardised(dense) + _standardised(reranker))),
}


def _closest(read: Sequence[FusedHit]) -> str | None:
    relevance = vote_relevance({hit.pmid: hit.semantic_score for hit in read})
    return closest_pmid(retrieved_abstracts([hit.pmid for hit in read], relevance=relevance))


def count_choices(
    questions: Sequence[YesNoQuestion], index: EvaluationIndex, write: Callable[[str], None]
) -> tuple[Counter[str], int]:
    embedder, reranker = engines.embedder(), engines.reranker()
    right: Counter[str] = Counter()
    asked = 0
    for question in questions:
        if not question.own_pmids:
            continue
        asked += 1
        if asked % 50 == 0:
            write(f"  {asked} questions")
        candidates = index_search(
            question.text, index=index, embedder=embedder, retrieval=candidates_settings(HybridSettings())
        )
        first_ten = candidates[:CONSENSUS_ABSTRACTS]
        right["own_not_in_ten"] += not {hit.pmid for hit in first_ten} & set(question.own_pmids)
        right["dense_first_ten"] += _closest(first_ten) in question.own_pmids
        read = hits_to_read(candidates, top_k=CONSENSUS_ABSTRACTS)
        pmids = [hit.pmid for hit in read]
        if not set(pmids) & set(question.own_pmids):
            right["own_not_read"] += 1
            continue
        right["dense"] += _closest(read) in question.own_pmids
        dense = np.array([hit.semantic_score or 0.0 for hit in read], dtype=np.float64)
        texts = [f"{index.articles[pmid].title} {index.articles[pmid].abstract}".strip() for pmid in pmids]
        scores = np.asarray(reranker.score(question.text, texts), dtype=np.float64)
        for name, choose in ALTERNATIVES.items():
            right[name] += pmids[choose(dense, scores)] in question.own_pmids
    return right, asked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="Write the results here.")
    args = parser.parse_args()
    pubmedqa = settings.VERIMED.paths.data_dir / "pubmedqa"
    benchmark = settings.VERIMED.paths.data_dir / "bioasq" / "benchmark"
    sets = AnswerSets(
        pubmedqa=pubmedqa / "ori_pqal.json",
        pubmedqa_ids=pubmedqa / "test_ground_truth.json",
        corpus=(benchmark / "corpus.jsonl.gz", benchmark / "distractors.jsonl.gz"),
        pubmedqa_extra=pubmedqa / "pubmedqa_subset_intelligence_inlpt.csv",
    )
    started = time.perf_counter()
    [(_name, corpus, questions, index)] = set_indexes(
        sets, split="dev", index_root=answers_index_root(), embedder=engines.embedder(), write=print
    )
    try:
        right, asked = count_choices(questions, index, print)
    finally:
        index.close()
    rows = {}
    print(f"\nPubMedQA dev questions with an own abstract: {asked} ({corpus})")
    print(f"{'choice':20s} {'own picked':>10s} {'share':>6s}  95% CI")
    for name in ("dense", "dense_first_ten", *ALTERNATIVES, "own_not_read", "own_not_in_ten"):
        low, high = wilson_interval(right[name], asked)
        rows[name] = {"count": right[name], "share": right[name] / asked, "ci95": [low, high]}
        print(f"{name:20s} {right[name]:10d} {right[name] / asked:6.3f}  {low:.3f}-{high:.3f}")
    seconds = time.perf_counter() - started
    print(f"{seconds:.0f} s on {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"questions": asked, "choices": rows, "seconds": seconds}, indent=2) + "\n")


if __name__ == "__main__":
    main()
