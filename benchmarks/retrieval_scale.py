"""Hybrid retrieval latency and ingestion throughput at 100k-1M abstracts, on synthetic corpora of real sentences.

    .venv/bin/python benchmarks/retrieval_scale.py --sizes 20000          # smoke run
    .venv/bin/python benchmarks/retrieval_scale.py --sizes 100000 1000000

How the corpus is built (no full PubMed is available offline, so larger corpora are assembled from real text):
- A pool of real text: the BioASQ benchmark corpus and its distractors (which include the SciFact corpus) are split
  into titles and sentences (a regex splitter at ". " / "? " / "! " before a capital, digit or bracket); sentences of
  30-400 characters are kept, deduplicated, and a seeded sample of `--pool-sentences` sentences and
  `--pool-titles` titles forms the pool.
- Each synthetic abstract = one pool title + 6-12 pool sentences drawn uniformly with a seeded numpy RNG (with
  replacement, so a sentence recurs in many abstracts). Its year, journal and publication type are drawn
  independently from the real values: years and journals of the BioASQ distractors that have them, publication
  types of the real PubMed XML excerpts in the shared data.
- Vectors (an approximation): MiniLM embedding 1M abstracts on 2 CPU cores takes many hours, so every pool text
  (title or sentence) is embedded once with the product's embedder (cached as .npy under var/bench-scale) and an
  abstract's vector is the L2-normalised mean of its title's and sentences' vectors. Queries are embedded for real,
  at search time, as the product does.

Each size is indexed into the product's adapters (TantivyIndex, QdrantEdgeIndex with one chunk per abstract),
timed per stage, then queried with BioASQ dev questions and SciFact dev claims. A built index is reused when the
script is re-run with the same size, seed and pool (fingerprint file), so a second run only measures.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import random
import re
import resource
import shutil
import statistics
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from indexer.base import Chunk, Facets, SearchFilters, Vectors
from indexer.embedder import SentenceTransformerEmbedder
from indexer.hybrid import HybridSettings, hybrid_search
from indexer.pubmed_xml import read_pubmed_xml
from indexer.qdrant_edge_index import QdrantEdgeIndex
from indexer.records import ArticleRecord, ReadStats
from indexer.tantivy_index import TantivyIndex

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = Path(os.environ.get("VERIMED_DATA_DIR", ROOT.parent / "shared" / "data"))
# Bumped when the corpus or index layout changes, so an index built by an older script is rebuilt, not measured.
BUILD_VERSION = 1
SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])")
MIN_SENTENCE, MAX_SENTENCE = 30, 400
FILTER = SearchFilters(year_from=2015)
MODES = ("embed", "embed_main_thread", "lexical", "vector_only", "semantic", "hybrid", "hybrid_filtered")

IntArray = npt.NDArray[np.int64]


# ---------------------------------------------------------------- pool of real text


@dataclass(frozen=True)
class FacetPool:
    """Real facet values to draw from, each kind independently."""

    years: list[int]
    journals: list[str]
    publication_types: list[tuple[str, ...]]


@dataclass(frozen=True)
class Pool:
    titles: list[str]
    sentences: list[str]
    title_vectors: Vectors
    sentence_vectors: Vectors
    facets: FacetPool
    fingerprint: str


def split_sentences(text: str) -> list[str]:
    return [s.strip() for s in SENTENCE_SPLIT.split(text) if MIN_SENTENCE <= len(s.strip()) <= MAX_SENTENCE]


def _jsonl_gz(path: Path) -> Iterator[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as stream:
        for line in stream:
            yield json.loads(line)


def read_real_text(data: Path) -> tuple[list[str], list[str]]:
    """Distinct real titles and sentences, in a stable (sorted) order so that seeded sampling is reproducible."""
    titles: set[str] = set()
    sentences: set[str] = set()
    bioasq = data / "bioasq" / "benchmark"
    for row in _jsonl_gz(bioasq / "corpus.jsonl.gz"):
        # "Title. Abstract": the first split piece is the title.
        title, _, abstract = row["text"].partition(". ")
        titles.add(title.strip() + ".")
        sentences.update(split_sentences(abstract))
    for row in _jsonl_gz(bioasq / "distractors.jsonl.gz"):
        title = (row.get("title") or "").strip()
        text = row["text"]
        if title:
            titles.add(title)
            text = text.removeprefix(title)
        sentences.update(split_sentences(text))
    return sorted(t for t in titles if len(t) >= MIN_SENTENCE // 2), sorted(sentences)


def read_facets(data: Path) -> FacetPool:
    years: list[int] = []
    journals: list[str] = []
    for row in _jsonl_gz(data / "bioasq" / "benchmark" / "distractors.jsonl.gz"):
        year = str(row.get("year") or "")
        if year.isdigit():
            years.append(int(year))
        if row.get("journal"):
            journals.append(str(row["journal"]))
    # The distractors carry no publication types; the real PubMed XML excerpts do.
    types: list[tuple[str, ...]] = []
    for path in sorted((data / "pubmed" / "xml").rglob("*.xml*")):
        try:
            types += [r.publication_types for r in read_pubmed_xml(path, ReadStats()) if r.publication_types]
        except Exception:  # an odd excerpt (no rows, an efetch wrapper) just contributes nothing
            continue
    return FacetPool(years=years, journals=journals, publication_types=types or [("Journal Article",)])


def build_pool(data: Path, cache: Path, *, sentences: int, titles: int, seed: int) -> Pool:
    """Sample the pool and embed it once; the vectors are cached under `cache` keyed by the pool's parameters."""
    all_titles, all_sentences = read_real_text(data)
    rng = random.Random(seed)
    pool_titles = rng.sample(all_titles, min(titles, len(all_titles)))
    pool_sentences = rng.sample(all_sentences, min(sentences, len(all_sentences)))
    fingerprint = f"pool-s{seed}-t{len(pool_titles)}-n{len(pool_sentences)}"
    vectors_path = cache / f"{fingerprint}.npy"
    texts = pool_titles + pool_sentences
    if vectors_path.exists():
        vectors = np.load(vectors_path)
        print(f"pool: {len(texts)} texts, vectors from {vectors_path}", flush=True)
    else:
        print(f"pool: embedding {len(texts)} texts (one-off, cached) ...", flush=True)
        started = time.perf_counter()
        vectors = embed_in_steps(SentenceTransformerEmbedder(batch_size=64), texts)
        cache.mkdir(parents=True, exist_ok=True)
        np.save(vectors_path, vectors)
        print(f"pool: embedded in {time.perf_counter() - started:.0f} s", flush=True)
    return Pool(
        titles=pool_titles,
        sentences=pool_sentences,
        title_vectors=vectors[: len(pool_titles)],
        sentence_vectors=vectors[len(pool_titles) :],
        facets=read_facets(data),
        fingerprint=fingerprint,
    )


def embed_in_steps(embedder: SentenceTransformerEmbedder, texts: Sequence[str], step: int = 2000) -> Vectors:
    parts = []
    for start in range(0, len(texts), step):
        parts.append(embedder.embed(texts[start : start + step]))
        print(f"  embedded {min(start + step, len(texts))}/{len(texts)}", flush=True)
    return np.concatenate(parts).astype(np.float32)


# ---------------------------------------------------------------- synthetic corpus


class Corpus:
    """N synthetic abstracts, drawn up front as index arrays (small) and materialised batch by batch."""

    def __init__(self, pool: Pool, size: int, seed: int) -> None:
        rng = np.random.default_rng(seed)
        self.pool = pool
        self.size = size
        self.lengths: IntArray = rng.integers(6, 13, size=size)
        self.offsets: IntArray = np.concatenate([[0], np.cumsum(self.lengths)])
        self.sentence_ids: IntArray = rng.integers(0, len(pool.sentences), size=int(self.offsets[-1]))
        self.title_ids: IntArray = rng.integers(0, len(pool.titles), size=size)
        self.year_ids: IntArray = rng.integers(0, len(pool.facets.years), size=size)
        self.journal_ids: IntArray = rng.integers(0, len(pool.facets.journals), size=size)
        self.type_ids: IntArray = rng.integers(0, len(pool.facets.publication_types), size=size)

    @staticmethod
    def pmid(i: int) -> str:
        return f"syn{i}"  # never a real PMID, so no result can be mistaken for one

    def records(self, start: int, stop: int) -> list[ArticleRecord]:
        pool, facets = self.pool, self.pool.facets
        return [
            ArticleRecord(
                pmid=self.pmid(i),
                title=pool.titles[self.title_ids[i]],
                abstract=" ".join(pool.sentences[j] for j in self.sentence_ids[self.offsets[i] : self.offsets[i + 1]]),
                year=facets.years[self.year_ids[i]],
                journal=facets.journals[self.journal_ids[i]],
                publication_types=facets.publication_types[self.type_ids[i]],
            )
            for i in range(start, stop)
        ]

    def vectors(self, start: int, stop: int) -> Vectors:
        """Mean of the title's and the sentences' pool vectors, L2-normalised (the stated approximation)."""
        lo, hi = int(self.offsets[start]), int(self.offsets[stop])
        sums = np.add.reduceat(self.pool.sentence_vectors[self.sentence_ids[lo:hi]], self.offsets[start:stop] - lo)
        sums += self.pool.title_vectors[self.title_ids[start:stop]]
        sums /= np.linalg.norm(sums, axis=1, keepdims=True)
        return sums.astype(np.float32)

    def year_share(self, filters: SearchFilters) -> float:
        years = np.asarray(self.pool.facets.years)[self.year_ids]
        admitted = np.ones(self.size, dtype=bool)
        if filters.year_from is not None:
            admitted &= years >= filters.year_from
        if filters.year_to is not None:
            admitted &= years <= filters.year_to
        return float(admitted.mean())


# ---------------------------------------------------------------- memory


class RssSampler:
    """Samples this process's resident memory every `interval` seconds from /proc (cheap) while a build runs."""

    def __init__(self, interval: float = 0.5) -> None:
        self.interval = interval
        self.peak_mb = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak_mb = max(self.peak_mb, current_rss_mb())
            self._stop.wait(self.interval)


def current_rss_mb() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def max_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux


# ---------------------------------------------------------------- build


@dataclass
class StageTimes:
    generate_s: float = 0.0  # records + chunks from the index arrays: stands in for parsing input files
    vectors_s: float = 0.0  # mean of pool vectors: stands in for the embedder (which would take hours)
    lexical_s: float = 0.0
    vector_upsert_s: float = 0.0
    optimize_s: float = 0.0
    rss_start_mb: float = 0.0
    rss_peak_sampled_mb: float = 0.0
    ru_maxrss_mb: float = 0.0
    disk_mb: dict[str, float] = field(default_factory=dict)

    def throughput(self, size: int) -> dict[str, float]:
        stages = {
            "generate": self.generate_s,
            "vectors (pool mean)": self.vectors_s,
            "lexical add": self.lexical_s,
            "vector upsert": self.vector_upsert_s,
            "optimize (HNSW+int8)": self.optimize_s,
        }
        return {name: size / seconds if seconds > 0 else 0.0 for name, seconds in stages.items()}


def directory_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


class Stopwatch:
    """Seconds spent per stage, summed over batches."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextmanager
    def stage(self, key: str) -> Iterator[None]:
        started = time.perf_counter()
        yield
        self.seconds[key] = self.seconds.get(key, 0.0) + time.perf_counter() - started


def build(corpus: Corpus, folder: Path, batch_size: int) -> StageTimes:
    """Index the corpus batch by batch (bounded memory), each stage timed on its own."""
    lexical = TantivyIndex(folder / "tantivy")
    vectors = QdrantEdgeIndex(folder / "qdrant", dimension=corpus.pool.sentence_vectors.shape[1])
    watch = Stopwatch()
    stats = StageTimes(rss_start_mb=current_rss_mb())
    with RssSampler() as sampler:
        for start in range(0, corpus.size, batch_size):
            stop = min(start + batch_size, corpus.size)
            with watch.stage("generate"):
                records = corpus.records(start, stop)
                chunks = [Chunk(pmid=r.pmid, index=0, text=r.text, facets=Facets.of(r)) for r in records]
            with watch.stage("vectors"):
                batch_vectors = corpus.vectors(start, stop)
            with watch.stage("lexical"):
                lexical.add(records)
            with watch.stage("upsert"):
                vectors.upsert(chunks, batch_vectors)
            print(f"  indexed {stop}/{corpus.size}  rss {current_rss_mb():.0f} MB", flush=True)
        print("  optimizing the vector index (HNSW + int8) ...", flush=True)
        with watch.stage("optimize"):
            vectors.optimize()
    vectors.close()
    lexical.close()
    times = watch.seconds
    stats.generate_s = times["generate"]
    stats.vectors_s = times["vectors"]
    stats.lexical_s = times["lexical"]
    stats.vector_upsert_s = times["upsert"]
    stats.optimize_s = times["optimize"]
    stats.rss_peak_sampled_mb = sampler.peak_mb
    stats.ru_maxrss_mb = max_rss_mb()
    stats.disk_mb = {name: round(directory_mb(folder / name), 1) for name in ("tantivy", "qdrant")}
    return stats


def build_or_reuse(corpus: Corpus, folder: Path, *, seed: int, batch_size: int) -> tuple[StageTimes, bool]:
    """A finished build with the same fingerprint is reused (its recorded build figures with it)."""
    fingerprint = {"version": BUILD_VERSION, "size": corpus.size, "seed": seed, "pool": corpus.pool.fingerprint}
    marker = folder / "fingerprint.json"
    if marker.exists():
        saved = json.loads(marker.read_text())
        if saved.get("fingerprint") == fingerprint:
            return StageTimes(**saved["build"]), True
    if folder.exists():
        shutil.rmtree(folder)  # a partial or different build: start clean
    folder.mkdir(parents=True)
    stats = build(corpus, folder, batch_size)
    marker.write_text(json.dumps({"fingerprint": fingerprint, "build": asdict(stats)}, indent=2))
    return stats, False


# ---------------------------------------------------------------- queries


def read_queries(data: Path, limit: int) -> list[str]:
    """BioASQ dev questions first, then SciFact dev claims, up to `limit`."""
    bioasq = data / "bioasq" / "benchmark" / "questions_dev.jsonl"
    scifact = data / "scifact" / "claims_dev.jsonl"
    queries = [json.loads(line)["body"] for line in bioasq.open(encoding="utf-8")]
    queries += [json.loads(line)["claim"] for line in scifact.open(encoding="utf-8")]
    return queries[:limit]


@dataclass
class Engines:
    lexical: TantivyIndex
    vectors: QdrantEdgeIndex
    embedder: SentenceTransformerEmbedder
    settings: HybridSettings

    @property
    def candidates(self) -> int:
        return max(self.settings.candidates_per_leg, self.settings.top_k)


def run_mode(engines: Engines, mode: str, query: str, vector: Vectors, pool: ThreadPoolExecutor) -> None:
    limit = engines.candidates
    if mode == "embed":
        # On a worker thread, as hybrid_search runs it: torch behaves very differently there (see embed_main_thread).
        pool.submit(engines.embedder.embed, [query]).result()
    elif mode == "embed_main_thread":
        engines.embedder.embed([query])
    elif mode == "lexical":
        engines.lexical.search(query, limit=limit)
    elif mode == "vector_only":
        engines.vectors.search(vector, limit=limit)  # the query vector precomputed: the engine's share alone
    else:
        # semantic, hybrid, hybrid_filtered: through the product's entry point, thread pool and fusion included.
        settings = engines.settings.model_copy(update={"mode": "semantic"}) if mode == "semantic" else engines.settings
        hybrid_search(
            query,
            lexical=engines.lexical,
            vectors=engines.vectors,
            embedder=engines.embedder,
            settings=settings,
            filters=FILTER if mode == "hybrid_filtered" else SearchFilters(),
        )


def measure_latency(engines: Engines, queries: Sequence[str], warm_up: int) -> dict[str, dict[str, float]]:
    """Every mode per query, the order rotated per query, so load drift on a shared machine hits all modes alike."""
    vectors = engines.embedder.embed(list(queries))
    samples: dict[str, list[float]] = {mode: [] for mode in MODES}
    with ThreadPoolExecutor(max_workers=1) as pool:
        for query, vector in zip(queries[:warm_up], vectors[:warm_up], strict=True):
            for mode in MODES:
                run_mode(engines, mode, query, vector, pool)
        for n, (query, vector) in enumerate(zip(queries, vectors, strict=True)):
            for k in range(len(MODES)):
                mode = MODES[(n + k) % len(MODES)]
                started = time.perf_counter()
                run_mode(engines, mode, query, vector, pool)
                samples[mode].append((time.perf_counter() - started) * 1000)
    return {mode: summarise(values) for mode, values in samples.items()}


def summarise(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "n": len(values),
        "p50_ms": round(statistics.median(ordered), 2),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 2),
        "mean_ms": round(statistics.fmean(ordered), 2),
    }


def shard_query(
    index: QdrantEdgeIndex, vector: Vectors, limit: int, filters: SearchFilters, *, exact: bool, hnsw_ef: int = 128
) -> list[tuple[str, float]]:
    """(pmid, score) on the full float vectors (int8 copies ignored), through the adapter's own query.

    exact=True is brute force, the truth the product's HNSW + int8 search is checked against; exact=False is HNSW
    without quantisation, which tells the graph's share of any recall loss from the int8 share. One chunk per
    abstract here, so points are articles and no per-PMID aggregation is needed.
    """
    return index.nearest_points(vector, limit=limit, filters=filters, quantized=False, exact=exact, hnsw_ef=hnsw_ef)


def recall_check(engines: Engines, queries: Sequence[str]) -> dict[str, Any]:
    """Recall@k of the product's vector search (HNSW, int8, rescoring) and of float HNSW, against exact search."""
    vectors = engines.embedder.embed(list(queries))
    result: dict[str, Any] = {"queries": len(queries)}
    for label, filters in (("unfiltered", SearchFilters()), ("year_from_2015", FILTER)):
        for k in (10, 50):
            product, float_hnsw, float_hnsw_512, exact_ms, spread = [], [], [], [], []
            for vector in vectors:
                started = time.perf_counter()
                exact = shard_query(engines.vectors, vector, k, filters, exact=True)
                exact_ms.append((time.perf_counter() - started) * 1000)
                truth = {pmid for pmid, _ in exact}
                approx = {hit.pmid for hit in engines.vectors.search(vector, limit=k, filters=filters)}
                graph = {pmid for pmid, _ in shard_query(engines.vectors, vector, k, filters, exact=False)}
                wide = {pmid for pmid, _ in shard_query(engines.vectors, vector, k, filters, exact=False, hnsw_ef=512)}
                product.append(len(approx & truth) / max(1, len(truth)))
                float_hnsw.append(len(graph & truth) / max(1, len(truth)))
                float_hnsw_512.append(len(wide & truth) / max(1, len(truth)))
                if exact:
                    spread.append(exact[0][1] - exact[-1][1])
            result[f"{label}_recall@{k}_product"] = round(statistics.fmean(product), 4)
            result[f"{label}_recall@{k}_float_hnsw"] = round(statistics.fmean(float_hnsw), 4)
            result[f"{label}_recall@{k}_float_hnsw_ef512"] = round(statistics.fmean(float_hnsw_512), 4)
            result[f"{label}_exact_p50_ms@{k}"] = round(statistics.median(exact_ms), 2)
            # How close the true neighbours lie: a small gap between the 1st and k-th means near-ties, hard for ANN.
            result[f"{label}_cosine_gap_top1_topk@{k}"] = round(statistics.fmean(spread), 4) if spread else None
    return result


def recall_control(
    pool: Pool, embedder: SentenceTransformerEmbedder, queries: Sequence[str], work: Path
) -> dict[str, Any]:
    """The same recall check on a small shard of REAL MiniLM vectors (the pool texts themselves, one point each)
    and on as many synthetic mean vectors, to tell the adapter's HNSW settings apart from the synthetic geometry.
    """
    real = np.concatenate([pool.title_vectors, pool.sentence_vectors])
    rng = np.random.default_rng(0)
    means = real[rng.integers(0, len(real), size=(len(real), 10))].mean(axis=1)
    means /= np.linalg.norm(means, axis=1, keepdims=True)
    query_vectors = embedder.embed(list(queries))
    result: dict[str, Any] = {"points": len(real), "queries": len(queries)}
    for label, vectors in (("real_minilm_vectors", real), ("means_of_10_pool_vectors", means.astype(np.float32))):
        folder = work / f"control-{label}"
        shutil.rmtree(folder, ignore_errors=True)
        index = QdrantEdgeIndex(folder, dimension=real.shape[1])
        try:
            chunks = [Chunk(pmid=f"c{i}", index=0, text="") for i in range(len(vectors))]
            index.upsert(chunks, vectors)
            index.optimize()
            recalls, gaps = [], []
            for vector in query_vectors:
                exact = shard_query(index, vector, 10, SearchFilters(), exact=True)
                approx = {hit.pmid for hit in index.search(vector, limit=10)}
                recalls.append(len(approx & {pmid for pmid, _ in exact}) / max(1, len(exact)))
                gaps.append(exact[0][1] - exact[-1][1])
            result[label] = {
                "recall@10_product": round(statistics.fmean(recalls), 4),
                "cosine_gap_top1_top10": round(statistics.fmean(gaps), 4),
            }
        finally:
            index.close()
            shutil.rmtree(folder, ignore_errors=True)
            (folder.parent / f".{folder.name}.lock").unlink(missing_ok=True)
    return result


# ---------------------------------------------------------------- report


def load_note() -> dict[str, Any]:
    one, five, fifteen = os.getloadavg()
    return {"loadavg_1_5_15": [round(one, 2), round(five, 2), round(fifteen, 2)], "cpus": os.cpu_count()}


def print_size(result: dict[str, Any]) -> None:
    size = result["size"]
    build = result["build"]
    print(f"\n== {size:,} abstracts {'(index reused)' if result['reused_index'] else ''}")
    print(f"{'stage':<24}{'seconds':>10}{'docs/s':>12}")
    seconds = {
        "generate": build["generate_s"],
        "vectors (pool mean)": build["vectors_s"],
        "lexical add": build["lexical_s"],
        "vector upsert": build["vector_upsert_s"],
        "optimize (HNSW+int8)": build["optimize_s"],
    }
    for name, value in seconds.items():
        print(f"{name:<24}{value:>10.1f}{size / value if value else 0:>12,.0f}")
    print(
        f"peak RSS: sampled {build['rss_peak_sampled_mb']:.0f} MB (build start {build['rss_start_mb']:.0f} MB), "
        f"ru_maxrss {build['ru_maxrss_mb']:.0f} MB; disk {build['disk_mb']}"
    )
    print(f"{'mode':<18}{'p50 ms':>10}{'p95 ms':>10}{'mean ms':>10}")
    for mode, figures in result["latency"].items():
        print(f"{mode:<18}{figures['p50_ms']:>10.1f}{figures['p95_ms']:>10.1f}{figures['mean_ms']:>10.1f}")
    print(f"filter {result['filter']} admits {result['filter_share']:.1%} of abstracts")
    print("recall vs exact:", {k: v for k, v in result["recall"].items() if k != "queries"})
    print("load:", result["load_before"], "->", result["load_after"])


def measure_size(
    args: argparse.Namespace, pool: Pool, embedder: SentenceTransformerEmbedder, size: int
) -> dict[str, Any]:
    folder = args.work / f"size-{size}-seed-{args.seed}"
    corpus = Corpus(pool, size, args.seed)
    load_before = load_note()
    print(f"\nsize {size:,}: building or reusing {folder}", flush=True)
    build_stats, reused = build_or_reuse(corpus, folder, seed=args.seed, batch_size=args.batch)
    engines = Engines(
        lexical=TantivyIndex(folder / "tantivy"),
        vectors=QdrantEdgeIndex(folder / "qdrant", dimension=embedder.dimension),
        embedder=embedder,
        settings=HybridSettings(),
    )
    try:
        engines.lexical.warm_up()
        engines.vectors.warm_up()
        counts = {"lexical_docs": engines.lexical.count(), "vector_points": engines.vectors.count()}
        queries = read_queries(args.data, args.queries)
        print(f"  measuring {len(queries)} queries x {len(MODES)} modes ...", flush=True)
        load_measure = load_note()
        latency = measure_latency(engines, queries, args.warm_up)
        print(f"  recall check on {args.recall_queries} queries ...", flush=True)
        recall = recall_check(engines, queries[: args.recall_queries])
        rss_after_queries = current_rss_mb()
    finally:
        engines.vectors.close()
        engines.lexical.close()
    return {
        "size": size,
        "reused_index": reused,
        "index_folder": str(folder),
        "counts": counts,
        "build": asdict(build_stats),
        "build_docs_per_s": {k: round(v, 1) for k, v in build_stats.throughput(size).items()},
        "latency": latency,
        "filter": asdict(FILTER),
        "filter_share": round(corpus.year_share(FILTER), 4),
        "recall": recall,
        "rss_after_queries_mb": round(rss_after_queries, 1),
        "load_before": load_before,
        "load_at_measure": load_measure,
        "load_after": load_note(),
    }


METHOD = {
    "corpus": (
        "Synthetic abstracts of real sentences: pool = seeded sample of distinct sentences (30-400 chars, regex split) "
        "and titles from the BioASQ benchmark corpus + distractors (incl. SciFact); each abstract = 1 pool title + "
        "6-12 pool sentences drawn uniformly with replacement (seeded numpy RNG). Year and journal drawn from the "
        "real distractors' values, publication types from the real PubMed XML excerpts, each independently."
    ),
    "vectors": (
        "APPROXIMATION: each pool text embedded once with MiniLM (all-MiniLM-L6-v2, the product's embedder); an "
        "abstract's vector = L2-normalised mean of its title's and sentences' vectors (not the embedding of its text). "
        "Query vectors are real MiniLM embeddings computed at query time."
    ),
    "indexes": (
        "indexer.TantivyIndex (add in batches) and indexer.QdrantEdgeIndex (one Chunk per abstract, index 0; "
        "upsert in batches, then optimize(): HNSW m=16 ef_construct=100 + int8 scalar quantisation, searched with "
        "hnsw_ef=max(128, fetch), oversampling 2, rescoring)."
    ),
    "modes": {
        "embed": "query embedding alone (MiniLM, 1 text) on a worker thread, as hybrid_search runs it",
        "embed_main_thread": "the same embedding on the calling (main) thread, torch default threads",
        "lexical": "TantivyIndex.search, 50 candidates",
        "vector_only": "QdrantEdgeIndex.search with a precomputed query vector, 50 candidates",
        "semantic": "hybrid_search with mode=semantic: embedding + QdrantEdgeIndex.search, 50 candidates",
        "hybrid": "indexer.hybrid.hybrid_search, HybridSettings() (weighted, top 10 of 50 per leg, 2 threads)",
        "hybrid_filtered": "hybrid with SearchFilters(year_from=2015) inside both legs",
    },
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--work", type=Path, default=ROOT / "var" / "bench-scale", help="indexes and pool cache")
    parser.add_argument("--json", type=Path, default=ROOT / "var" / "benchmarks" / "retrieval-scale.json")
    parser.add_argument("--pool-sentences", type=int, default=12_000)
    parser.add_argument("--pool-titles", type=int, default=3_000)
    parser.add_argument("--batch", type=int, default=10_000, help="abstracts per indexing batch")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--warm-up", type=int, default=10)
    parser.add_argument("--recall-queries", type=int, default=50)
    parser.add_argument("--delete-indexes", action="store_true", help="remove each index folder after measuring it")
    args = parser.parse_args()

    pool = build_pool(args.data, args.work, sentences=args.pool_sentences, titles=args.pool_titles, seed=args.seed)
    embedder = SentenceTransformerEmbedder()  # the product's settings: default batch and torch threads
    embedder.warm_up()
    print("recall control on real vectors ...", flush=True)
    control = recall_control(pool, embedder, read_queries(args.data, args.recall_queries), args.work)
    print("recall control:", control, flush=True)
    results = []
    for size in args.sizes:
        result = measure_size(args, pool, embedder, size)
        print_size(result)
        results.append(result)
        if args.delete_indexes:
            shutil.rmtree(result["index_folder"], ignore_errors=True)
        write_json(args, pool, control, results)


def previous_results(path: Path, pool: Pool, seed: int) -> list[dict[str, Any]]:
    try:
        previous = json.loads(path.read_text())
    except (OSError, ValueError):
        return []
    if previous.get("seed") != seed or previous.get("pool", {}).get("fingerprint") != pool.fingerprint:
        return []
    return list(previous.get("results", []))


def write_json(args: argparse.Namespace, pool: Pool, control: dict[str, Any], results: list[dict[str, Any]]) -> None:
    """Written after every size, so a long run that is stopped keeps what it measured.

    Sizes measured by an earlier run with the same pool and seed but not by this one are kept, so that a quick
    re-run of one size does not erase the figures of a long one.
    """
    measured = {result["size"] for result in results}
    kept = [result for result in previous_results(args.json, pool, args.seed) if result["size"] not in measured]
    report = {
        "method": METHOD,
        "pool": {
            "fingerprint": pool.fingerprint,
            "titles": len(pool.titles),
            "sentences": len(pool.sentences),
            "facet_values": {
                "years": len(pool.facets.years),
                "journals": len(pool.facets.journals),
                "publication_types": len(pool.facets.publication_types),
            },
        },
        "seed": args.seed,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "recall_control": control,
        "results": sorted(kept + results, key=lambda result: int(result["size"])),
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2))
    print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
