"""Does pseudo-relevance feedback on the lexical leg help? RM3-style expansion measured on BioASQ dev, side by side.

    .venv/bin/python benchmarks/query_expansion.py --json var/benchmarks/query-expansion.json

The question's lexical search runs once; the words that stand out in its top `--feedback-docs` abstracts (by term
frequency against the corpus's document frequency) are added to the query with a lower weight (`--weight`), and the
lexical leg runs again. Reported per setting: the lexical leg alone and RRF fusion with the (unchanged) semantic leg,
MAP@10 and nDCG@10, over the index `manage.py evaluate retrieval` builds (reused, never rebuilt here).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections import Counter
from pathlib import Path

import django

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
django.setup()

from django.conf import settings  # noqa: E402

from indexer.base import Hit  # noqa: E402
from indexer.evaluation import evaluation_index_dir, read_corpus, read_qrels, read_questions, scores  # noqa: E402
from indexer.evaluation_index import build_evaluation_index  # noqa: E402
from indexer.hybrid import HybridSettings, fuse  # noqa: E402
from indexer.stopwords import query_terms  # noqa: E402
from webapp.corpus import engines  # noqa: E402

BENCHMARK = settings.VERIMED_DATA_DIR / "bioasq" / "benchmark"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--feedback-docs", type=int, nargs="+", default=[3, 5, 10])
    parser.add_argument("--terms", type=int, nargs="+", default=[5, 10])
    parser.add_argument("--weight", type=float, nargs="+", default=[0.2, 0.4])
    parser.add_argument(
        "--idf",
        choices=("corpus", "candidates"),
        default="corpus",
        help="document frequencies from the whole corpus, or from the lexical leg's 100 candidates only (what a "
        "search can read without asking the engine for statistics)",
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    corpus = [BENCHMARK / "corpus.jsonl.gz", BENCHMARK / "distractors.jsonl.gz"]
    questions = read_questions(BENCHMARK / "questions_dev.jsonl")
    qrels = read_qrels(BENCHMARK / "qrels_dev.tsv")
    records, _ = read_corpus(corpus)
    embedder = engines.embedder()
    index = build_evaluation_index(records, evaluation_index_dir(settings.VAR_DIR / "eval", corpus), embedder)
    words = {record.pmid: query_terms(record.text) for record in records}
    counts = {pmid: Counter(tokens) for pmid, tokens in words.items()}
    document_frequency: Counter[str] = Counter()
    for tokens in words.values():
        document_frequency.update(set(tokens))
    total = len(records)
    tindex = index.lexical._open()
    boost = index.lexical.title_boost

    def lexical(query_string: str) -> list[Hit]:
        parsed = tindex.parse_query(query_string, ["title", "body"], field_boosts={"title": boost})
        searcher = tindex.searcher()
        return [Hit(searcher.doc(a)["pmid"][0], float(s)) for s, a in searcher.search(parsed, 100).hits]

    semantic = {q.id: index.vectors.search(embedder.embed([q.text])[0], limit=100) for q in questions}
    base = {q.id: lexical(" ".join(query_terms(q.text))) for q in questions}
    rrf = HybridSettings(top_k=100, fusion="rrf", lexical_weight=0.5, semantic_weight=0.5, candidates_per_leg=100)

    def measure(lexical_hits: dict[str, list[Hit]]) -> dict[str, float]:
        lex = scores({q: [h.pmid for h in hits] for q, hits in lexical_hits.items()}, qrels)
        fused = scores({q: [h.pmid for h in fuse(lexical_hits[q], semantic[q], rrf)] for q in lexical_hits}, qrels)
        return {
            "lexical_map@10": lex["map@10"],
            "lexical_ndcg@10": lex["ndcg@10"],
            "rrf_map@10": fused["map@10"],
            "rrf_ndcg@10": fused["ndcg@10"],
        }

    results = {"no expansion": measure(base)}
    for docs in args.feedback_docs:
        for terms in args.terms:
            for weight in args.weight:
                expanded = {}
                for question in questions:
                    original = query_terms(question.text)
                    pool: Counter[str] = Counter()
                    if args.idf == "candidates":
                        frequency: Counter[str] = Counter()
                        for hit in base[question.id]:
                            frequency.update(counts[hit.pmid].keys())
                        size = len(base[question.id])
                    else:
                        frequency, size = document_frequency, total
                    for hit in base[question.id][:docs]:
                        length = sum(counts[hit.pmid].values()) or 1
                        for term, count in counts[hit.pmid].items():
                            if term not in original and not term.isdigit() and len(term) > 2:
                                pool[term] += count / length * math.log(size / (1 + frequency[term]))
                    extra = [term for term, _ in pool.most_common(terms)]
                    query = " ".join(original) + "".join(f" {term}^{weight}" for term in extra)
                    expanded[question.id] = lexical(query)
                results[f"prf docs={docs} terms={terms} weight={weight}"] = measure(expanded)
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
