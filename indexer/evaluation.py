"""Retrieval evaluation: lexical, semantic and hybrid search over one corpus, against plain BM25 from the `bm25s`
package as the peer a user would otherwise pick, scored with ir-measures (trec_eval underneath).

`evaluate_retrieval_files` is the whole run `manage.py evaluate retrieval` makes: read the inputs, build (or reuse)
a throw-away index the way ingestion builds the real one, measure every mode, summarise the build.
"""

from __future__ import annotations

import hashlib
import json
import resource
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ir_measures
import numpy as np
from ir_measures import AP, P, R, nDCG

from indexer.base import Embedder, Reranker
from indexer.errors import CorpusFormatError
from indexer.evaluation_index import EvaluationIndex, build_evaluation_index
from indexer.hybrid import HybridSettings, hybrid_search
from indexer.readers import read_articles
from indexer.records import ArticleRecord, ReadStats

Write = Callable[[str], None]
Ranking = list[str]  # PMIDs, best first
DEPTH = 100  # recall@100 needs 100 results per question
METRICS = ("p@10", "map@10", "ndcg@10", "recall@100")


@dataclass(frozen=True)
class Question:
    id: str
    text: str


def read_questions(path: Path) -> list[Question]:
    """JSON lines with an `id` and the text as `body` (BioASQ), `question` or `claim` (SciFact)."""
    questions: list[Question] = []
    with path.open(encoding="utf-8") as stream:
        for number, line in enumerate(stream, start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except json.JSONDecodeError as exc:
                raise CorpusFormatError(f"{path}: line {number}: invalid JSON: {exc}") from exc
            text = next((item[key] for key in ("body", "question", "claim") if item.get(key)), None)
            if "id" not in item or not text:
                raise CorpusFormatError(f"{path}: line {number}: needs an 'id' and a 'body', 'question' or 'claim'")
            questions.append(Question(id=str(item["id"]), text=str(text)))
    return questions


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """Tab-separated `query_id pmid relevance` (a header line is skipped) or TREC's `qid 0 docid rel`."""
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8") as stream:
        for number, line in enumerate(stream, start=1):
            fields = line.split()
            if not fields or (number == 1 and not fields[-1].lstrip("-").isdigit()):
                continue
            if len(fields) == 4:
                fields = [fields[0], fields[2], fields[3]]
            if len(fields) != 3 or not fields[2].lstrip("-").isdigit():
                raise CorpusFormatError(f"{path}: line {number}: expected 'query_id pmid relevance', got {line!r}")
            qrels.setdefault(fields[0], {})[fields[1]] = int(fields[2])
    return qrels


def read_corpus(paths: Iterable[Path]) -> tuple[list[ArticleRecord], float]:
    """Every record of every file (a later file's record replaces an earlier one's), and the seconds spent parsing."""
    started = time.perf_counter()
    records: dict[str, ArticleRecord] = {}
    for path in paths:
        for record in read_articles(path, ReadStats()):
            records[record.pmid] = record
    return list(records.values()), time.perf_counter() - started


def scores(rankings: dict[str, Ranking], qrels: dict[str, dict[str, int]]) -> dict[str, float]:
    """Mean P@10, MAP@10, nDCG@10 and recall@100 over every question that has qrels (no results scores 0).

    trec_eval's AP@10 divides by all relevant documents; MAP@10 here divides by min(|relevant|, 10), so that a
    question with 30 relevant documents can still reach 1.
    """
    measures = {"p@10": P @ 10, "ndcg@10": nDCG @ 10, "recall@100": R @ 100, "ap@10": AP @ 10}
    # Scores that fall with rank, so trec_eval (which sorts by score, ties by doc id) keeps our order exactly.
    run = {
        qid: {pmid: float(len(ranking) - rank) for rank, pmid in enumerate(ranking)}
        for qid, ranking in rankings.items()
    }
    per_query: dict[str, dict[str, float]] = {qid: dict.fromkeys(measures, 0.0) for qid in qrels}
    names = {measure: name for name, measure in measures.items()}
    for metric in ir_measures.iter_calc(list(measures.values()), qrels, {qid: run[qid] for qid in run if run[qid]}):
        if metric.query_id in per_query:
            per_query[metric.query_id][names[metric.measure]] = float(metric.value)
    totals = dict.fromkeys(METRICS, 0.0)
    for qid, values in per_query.items():
        relevant = sum(1 for rel in qrels[qid].values() if rel > 0)
        normaliser = min(relevant, 10)
        totals["map@10"] += values["ap@10"] * relevant / normaliser if normaliser else 0.0
        for name in ("p@10", "ndcg@10", "recall@100"):
            totals[name] += values[name]
    count = max(len(per_query), 1)
    return {name: round(total / count, 4) for name, total in totals.items()}


def latency_summary(latencies_ms: Sequence[float]) -> dict[str, float]:
    if not latencies_ms:
        return {"latency_ms_p50": 0.0, "latency_ms_p95": 0.0}
    return {
        "latency_ms_p50": round(statistics.median(latencies_ms), 2),
        "latency_ms_p95": round(float(np.percentile(latencies_ms, 95)), 2),
    }


class Bm25sBaseline:
    """Plain BM25 (Robertson, k1 1.5, b 0.75) from `bm25s` with English stopwords and the Snowball stemmer."""

    def __init__(self, records: Sequence[ArticleRecord]) -> None:
        import bm25s
        import Stemmer

        self._bm25s = bm25s
        self._stemmer = Stemmer.Stemmer("english")
        self.pmids = [record.pmid for record in records]
        tokens = bm25s.tokenize(
            [record.text for record in records], stopwords="en", stemmer=self._stemmer, show_progress=False
        )
        self._retriever = bm25s.BM25()
        self._retriever.index(tokens, show_progress=False)

    def search(self, query: str, *, limit: int) -> Ranking:
        tokens = self._bm25s.tokenize([query], stopwords="en", stemmer=self._stemmer, show_progress=False)
        if not tokens.ids or not tokens.ids[0]:
            return []
        k = min(limit, len(self.pmids))
        documents, doc_scores = self._retriever.retrieve(tokens, k=k, show_progress=False, n_threads=1)
        return [self.pmids[int(doc)] for doc, score in zip(documents[0], doc_scores[0], strict=True) if score > 0]


def _timed_rankings(
    questions: Sequence[Question], search: Callable[[str], Ranking]
) -> tuple[dict[str, Ranking], list[float]]:
    search(questions[0].text)  # warm-up: first-call costs (caches, lazy loads) are not per-question latency
    rankings: dict[str, Ranking] = {}
    latencies: list[float] = []
    for question in questions:
        started = time.perf_counter()
        rankings[question.id] = search(question.text)
        latencies.append((time.perf_counter() - started) * 1000)
    return rankings, latencies


RERANKED_FUSIONS = ("hybrid_prf", "hybrid_rrf_prf")
# Today's legs and fusions, spelled out rather than taken from HybridSettings' defaults, so that a change of the
# product's defaults never changes what `lexical` or `hybrid` measure.
PLAIN: dict[str, Any] = {"candidates_per_leg": DEPTH, "expand_query": False, "rerank": False}
# Pseudo-relevance feedback on the lexical leg (`indexer.query_expansion`) with the product's expansion settings.
EXPANDED = {"expand_query": True}
_SAME_MODE_IGNORES = {"top_k", "candidates_per_leg", "rerank_candidates"}


def product_modes(
    lexical_weights: Sequence[float] = (), rerank_candidates: Sequence[int] = ()
) -> dict[str, HybridSettings]:
    """The product's own search settings per mode, each returning the evaluation depth; `lexical_weights` adds a
    weighted-fusion run per weight (the semantic weight is 1 minus it) for choosing the default on held-out data.

    `<mode>_prf` runs the lexical and fused modes with pseudo-relevance feedback on the lexical leg.
    `rerank_candidates` adds `<fusion>_reranked` for each fusion, re-scoring the first count's candidates, and
    `<fusion>_reranked_top<N>` for each further count (how many candidates pay for their cost)."""
    sweep = {
        f"hybrid_lexical_{weight:.2f}": HybridSettings(
            top_k=DEPTH, lexical_weight=weight, semantic_weight=round(1 - weight, 4), **PLAIN
        )
        for weight in lexical_weights
    }
    modes = sweep | {
        "lexical": HybridSettings(top_k=DEPTH, mode="lexical", **PLAIN),
        "semantic": HybridSettings(top_k=DEPTH, mode="semantic", **PLAIN),
        "hybrid": HybridSettings(top_k=DEPTH, fusion="weighted", lexical_weight=0.7, semantic_weight=0.3, **PLAIN),
        "hybrid_rrf": HybridSettings(top_k=DEPTH, fusion="rrf", lexical_weight=0.5, semantic_weight=0.5, **PLAIN),
    }
    for name in ("lexical", "hybrid", "hybrid_rrf"):
        modes[f"{name}_prf"] = modes[name].model_copy(update=EXPANDED)
    for fusion in RERANKED_FUSIONS if rerank_candidates else ():
        for position, count in enumerate(rerank_candidates):
            name = f"{fusion}_reranked" + (f"_top{count}" if position else "")
            modes[name] = modes[fusion].model_copy(update={"rerank": True, "rerank_candidates": count})
    return modes


def mode_name(settings: HybridSettings, modes: dict[str, HybridSettings]) -> str | None:
    """The measured mode that searches as `settings` do (depth and candidate counts aside), if any; a reranked mode
    matches only the run with the same candidate count."""
    wanted = settings.model_dump(exclude=_SAME_MODE_IGNORES)
    for name, candidate in modes.items():
        same = candidate.model_dump(exclude=_SAME_MODE_IGNORES) == wanted
        if same and (not settings.rerank or candidate.rerank_candidates == settings.rerank_candidates):
            return name
    return None


def evaluate_retrieval(
    *,
    records: Sequence[ArticleRecord],
    questions: Sequence[Question],
    qrels: dict[str, dict[str, int]],
    index: EvaluationIndex,
    embedder: Embedder,
    write: Write,
    lexical_weights: Sequence[float] = (),
    reranker: Reranker | None = None,
    rerank_candidates: Sequence[int] = (),
    product_default: HybridSettings | None = None,
) -> dict[str, Any]:
    """Every mode over the same index, then the bm25s peer. `product_default` (the product's search settings) names
    the `default_mode`."""
    judged = [question for question in questions if question.id in qrels]
    if not judged:
        raise CorpusFormatError("no question has qrels: check that the question ids match the qrels' query ids")
    texts = {record.pmid: (record.title, record.abstract) for record in records}

    def abstracts(pmids: Sequence[str]) -> dict[str, tuple[str, str]]:
        return {pmid: texts[pmid] for pmid in pmids if pmid in texts}

    settings_by_mode = product_modes(lexical_weights, rerank_candidates if reranker is not None else ())
    modes: dict[str, dict[str, float]] = {}
    for name, settings in settings_by_mode.items():
        write(f"  {name}: {len(judged)} questions…")

        def search(text: str, settings: HybridSettings = settings) -> Ranking:
            hits = hybrid_search(
                text,
                lexical=index.lexical,
                vectors=index.vectors,
                embedder=embedder,
                settings=settings,
                reranker=reranker,
                abstracts=abstracts,
            )
            return [hit.pmid for hit in hits]

        rankings, latencies = _timed_rankings(judged, search)
        modes[name] = {**scores(rankings, qrels), **latency_summary(latencies)}
    write("  bm25s_baseline: indexing and searching…")
    started = time.perf_counter()
    baseline = Bm25sBaseline(records)
    baseline_index_s = time.perf_counter() - started
    rankings, latencies = _timed_rankings(judged, lambda text: baseline.search(text, limit=DEPTH))
    modes["bm25s_baseline"] = {**scores(rankings, qrels), **latency_summary(latencies)}
    return {
        "n_questions": len(judged),
        "n_docs": len(records),
        "modes": modes,
        "default_mode": mode_name(product_default, settings_by_mode) if product_default else None,
        "bm25s_index_seconds": round(baseline_index_s, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def build_summary(index: EvaluationIndex, *, parse_seconds: float) -> dict[str, Any]:
    """Ingestion throughput per stage for the build this run did (absent when the index was reused)."""
    docs = len(index.articles)
    seconds = {"parse": parse_seconds, **index.seconds}
    return {
        "docs": docs,
        "chunks": index.chunks,
        "reused": not index.seconds,
        "seconds": {stage: round(value, 2) for stage, value in seconds.items()},
        "docs_per_second": {stage: round(docs / value, 1) for stage, value in seconds.items() if value > 0},
    }


def evaluation_index_dir(root: Path, corpus: Sequence[Path]) -> Path:
    # One folder per corpus so that BioASQ and SciFact runs do not rebuild each other's index.
    name = hashlib.sha256("\0".join(str(path.resolve()) for path in corpus).encode()).hexdigest()[:12]
    return root / f"retrieval-{name}"


def evaluate_retrieval_files(
    *,
    corpus: Sequence[Path],
    questions_path: Path,
    qrels_path: Path,
    index_dir: Path,
    embedder: Embedder,
    write: Write,
    lexical_weights: Sequence[float] = (),
    reranker: Reranker | None = None,
    rerank_candidates: Sequence[int] = (),
    product_default: HybridSettings | None = None,
) -> dict[str, Any]:
    """One run from the files: the questions, their qrels and the corpus, indexed into `index_dir` (reused when it
    already holds the same documents embedded by the same model)."""
    questions = read_questions(questions_path)
    qrels = read_qrels(qrels_path)
    write(f"reading {len(corpus)} corpus file(s)…")
    records, parse_seconds = read_corpus(corpus)
    if not records:
        raise CorpusFormatError("the corpus holds no documents with an abstract")
    write(f"indexing {len(records):,} documents into {index_dir} (reused when already built)…")
    index = build_evaluation_index(records, index_dir, embedder)
    try:
        result = evaluate_retrieval(
            records=records,
            questions=questions,
            qrels=qrels,
            index=index,
            embedder=embedder,
            write=write,
            lexical_weights=lexical_weights,
            reranker=reranker,
            rerank_candidates=rerank_candidates,
            product_default=product_default,
        )
    finally:
        index.close()
    result["build"] = build_summary(index, parse_seconds=parse_seconds)
    result["embedding_model"] = embedder.model_id
    result["embedding_backend"] = getattr(embedder, "backend", None)
    result["corpus"] = [str(path) for path in corpus]
    return result


def format_retrieval_table(result: dict[str, Any]) -> str:
    width = max(16, *(len(mode) + 1 for mode in result["modes"]))
    header = f"{'mode':<{width}}" + "".join(f"{name:>11}" for name in (*METRICS, "p50 ms", "p95 ms"))
    lines = [f"{result['n_questions']} questions over {result['n_docs']:,} documents", header, "-" * len(header)]
    for mode, values in result["modes"].items():
        cells = [f"{values[name]:>11.4f}" for name in METRICS]
        cells += [f"{values['latency_ms_p50']:>11.1f}", f"{values['latency_ms_p95']:>11.1f}"]
        marker = " (default)" if mode == result.get("default_mode") else ""
        lines.append(f"{mode:<{width}}" + "".join(cells) + marker)
    build = result.get("build")
    if build and not build["reused"]:
        rates = ", ".join(f"{stage} {rate:,.0f}/s" for stage, rate in build["docs_per_second"].items())
        lines.append(f"build: {build['docs']:,} docs, {build['chunks']:,} chunks; {rates}")
    lines.append(f"peak RSS {result['peak_rss_mb']:,.0f} MB")
    return "\n".join(lines)
