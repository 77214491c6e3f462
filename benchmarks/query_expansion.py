"""Does pseudo-relevance feedback on the lexical leg help? The product's expansion over a grid of its settings.

    .venv/bin/python benchmarks/query_expansion.py --json var/benchmarks/query-expansion.json

Every setting runs the product's own search, `indexer.hybrid.hybrid_search`, which expands the lexical query through
`indexer.query_expansion` (the words that stand out in the lexical leg's top `--feedback-docs` abstracts, by document
frequency among its 100 candidates, `--terms` of them added at `--weight`): nothing of the expansion is re-written
here. Reported per setting, on BioASQ dev: the lexical leg alone and RRF fusion with the semantic leg (the modes
`lexical_prf` and `hybrid_rrf_prf` of `manage.py evaluate retrieval`, with the grid's expansion settings), MAP@10 and
nDCG@10, over the index that command builds (reused, never rebuilt here).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import django

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
django.setup()

from django.conf import settings  # noqa: E402

from indexer.base import Embedder  # noqa: E402
from indexer.evaluation import (  # noqa: E402
    Question,
    evaluation_index_dir,
    product_modes,
    read_corpus,
    read_qrels,
    read_questions,
    scores,
)
from indexer.evaluation_index import EvaluationIndex, build_evaluation_index  # noqa: E402
from indexer.hybrid import HybridSettings, hybrid_search  # noqa: E402
from webapp.corpus import engines  # noqa: E402

# The product's modes each column measures, as `manage.py evaluate retrieval` names them.
LEGS = {"lexical": "lexical_prf", "rrf": "hybrid_rrf_prf"}


def expansion_grid(
    questions: Sequence[Question],
    qrels: dict[str, dict[str, int]],
    index: EvaluationIndex,
    embedder: Embedder,
    *,
    feedback_docs: Sequence[int],
    terms: Sequence[int],
    weights: Sequence[float],
) -> dict[str, dict[str, float]]:
    """MAP@10 and nDCG@10 of each leg without expansion, then with each combination of the grid's settings."""
    modes = product_modes()

    def abstracts(pmids: Sequence[str]) -> dict[str, tuple[str, str]]:
        return {
            pmid: (index.articles[pmid].title, index.articles[pmid].abstract)
            for pmid in pmids
            if pmid in index.articles
        }

    def measure(update: Mapping[str, object]) -> dict[str, float]:
        measured: dict[str, float] = {}
        for leg, mode in LEGS.items():
            # Validated, so that a grid point outside the product's bounds is refused rather than measured.
            search_settings = HybridSettings.model_validate({**modes[mode].model_dump(), **update})
            rankings = {
                question.id: [
                    hit.pmid
                    for hit in hybrid_search(
                        question.text,
                        lexical=index.lexical,
                        vectors=index.vectors,
                        embedder=embedder,
                        settings=search_settings,
                        abstracts=abstracts,
                    )
                ]
                for question in questions
            }
            result = scores(rankings, qrels)
            measured[f"{leg}_map@10"], measured[f"{leg}_ndcg@10"] = result["map@10"], result["ndcg@10"]
        return measured

    results = {"no expansion": measure({"expand_query": False})}
    for docs in feedback_docs:
        for count in terms:
            for weight in weights:
                update = {"expansion_feedback": docs, "expansion_terms": count, "expansion_weight": weight}
                results[f"prf docs={docs} terms={count} weight={weight}"] = measure(update)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--feedback-docs", type=int, nargs="+", default=[3, 5, 10])
    parser.add_argument("--terms", type=int, nargs="+", default=[5, 10])
    parser.add_argument("--weight", type=float, nargs="+", default=[0.2, 0.4])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    benchmark = settings.VERIMED.paths.data_dir / "bioasq" / "benchmark"
    corpus = [benchmark / "corpus.jsonl.gz", benchmark / "distractors.jsonl.gz"]
    questions = read_questions(benchmark / "questions_dev.jsonl")
    qrels = read_qrels(benchmark / "qrels_dev.tsv")
    records, _ = read_corpus(corpus)
    embedder = engines.embedder()
    index = build_evaluation_index(records, evaluation_index_dir(settings.VAR_DIR / "eval", corpus), embedder)
    try:
        results = expansion_grid(
            questions, qrels, index, embedder, feedback_docs=args.feedback_docs, terms=args.terms, weights=args.weight
        )
    finally:
        index.close()
    width = max(map(len, results))
    print(f"{'setting':<{width}}  lexical MAP@10  lexical nDCG@10  RRF MAP@10  RRF nDCG@10")
    for name, values in results.items():
        print(
            f"{name:<{width}}  {values['lexical_map@10']:>14.4f}  {values['lexical_ndcg@10']:>15.4f}"
            f"  {values['rrf_map@10']:>10.4f}  {values['rrf_ndcg@10']:>11.4f}"
        )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"n_questions": len(questions), "results": results}, indent=2))


if __name__ == "__main__":
    main()
