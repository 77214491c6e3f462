"""How fast each embedding backend runs on this CPU, and what it costs in vector and retrieval quality.

    .venv/bin/python benchmarks/embedding_speed.py --json var/benchmarks/embedding-speed.json

Variants: `torch` (sentence-transformers fp32, the reference), `torch-int8` (torch's own dynamic per-channel int8 on
every Linear; a benchmark-only variant), `onnx` (fp32 graph fused by ONNX Runtime) and `onnx-int8` (its dynamic
int8 weights). The ONNX ones are exported once into --cache-dir (default var/models, the webapp's
VERIMED_MODEL_CACHE) and reused.

What it measures, all in one process unless said otherwise:
- speed: texts/s and tokens/s (tokens counted after truncation to the model's 256-token window) over --texts real
  BioASQ title+abstract texts. The texts are cut into chunks of --chunk and the variants take turns per chunk, in
  rotating order, so that load from other processes falls on all of them alike.
- cold start and memory: each variant loads in a fresh child process (imports included) and embeds --probe-texts
  texts; `load_s` and `peak_rss_mib` (the child's maximum resident set) come from there.
- agreement: mean and minimum cosine between each variant's vectors and torch fp32's, over the speed texts.
- batch size: the fastest variant whose mean cosine is >= 0.99 is re-timed at each --sweep batch size, interleaved.
- retrieval (unless --skip-scifact): SciFact dev claims with evidence against the 5,183-document corpus (title and
  abstract, truncated to the window as the model does), exact cosine with numpy; nDCG@10 and recall@100 by
  ir_measures, for each of --scifact-variants. The default scores torch and onnx-int8 only, to keep the default run
  about 13 minutes on the 2-core development machine; `--scifact-variants all` adds ~5 minutes per extra variant.

Other flags: --batch-size (default 32, the product's), --threads (default 2), --skip-sweep, --variants.
"""

from __future__ import annotations

import argparse
import gzip
import json
import resource
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from indexer.embedder import BACKENDS, SentenceTransformerEmbedder
from indexer.packaged_models import resolve_model_path

VARIANTS = ("torch", "torch-int8", "onnx", "onnx-int8")
REFERENCE = "torch"
QUALITY_GATE = 0.99  # mean cosine to fp32 a variant needs before it may be recommended


class TorchInt8Embedder:
    """torch.ao dynamic int8 (per-channel weights) on every Linear of the sentence-transformers model."""

    def __init__(self, *, batch_size: int, threads: int) -> None:
        import torch
        from sentence_transformers import SentenceTransformer
        from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

        torch.set_num_threads(threads)
        model = SentenceTransformer(resolve_model_path("minilm"), device="cpu")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch.ao's own deprecation notice
            linear = {torch.nn.Linear: per_channel_dynamic_qconfig}
            self.model = quantize_dynamic(model, linear, dtype=torch.qint8)  # type: ignore[no-untyped-call]
        self.batch_size = batch_size

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self.model.encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True)
        return np.asarray(vectors, dtype=np.float32)


Embed = Callable[[Sequence[str]], np.ndarray]


def load_variant(variant: str, *, batch_size: int, threads: int, cache_dir: Path) -> Any:
    if variant == "torch-int8":
        return TorchInt8Embedder(batch_size=batch_size, threads=threads)
    backend = next(backend for backend in BACKENDS if backend == variant)
    embedder = SentenceTransformerEmbedder(batch_size=batch_size, threads=threads, backend=backend, cache_dir=cache_dir)
    embedder.warm_up()
    return embedder


@dataclass
class Timing:
    seconds: float = 0.0
    texts: int = 0
    tokens: int = 0
    vectors: list[np.ndarray] = field(default_factory=list)

    def rate(self) -> tuple[float, float]:
        return self.texts / self.seconds, self.tokens / self.seconds


def interleaved(
    embedders: dict[str, Embed], texts: Sequence[str], tokens: Sequence[int], chunk: int
) -> dict[str, Timing]:
    """Every embedder embeds every chunk; the order of turns rotates from chunk to chunk."""
    timings = {name: Timing() for name in embedders}
    names = list(embedders)
    for index, start in enumerate(range(0, len(texts), chunk)):
        part, part_tokens = texts[start : start + chunk], sum(tokens[start : start + chunk])
        for name in names[index % len(names) :] + names[: index % len(names)]:
            began = time.perf_counter()
            vectors = embedders[name](part)
            timings[name].seconds += time.perf_counter() - began
            timings[name].texts += len(part)
            timings[name].tokens += part_tokens
            timings[name].vectors.append(vectors)
    return timings


def cosines(vectors: np.ndarray, reference: np.ndarray) -> np.ndarray:
    return np.asarray((vectors * reference).sum(axis=1), dtype=np.float64)


def bioasq_texts(corpus: Path, limit: int) -> list[str]:
    texts: list[str] = []
    with gzip.open(corpus, "rt", encoding="utf-8") as lines:
        for line in lines:
            text = json.loads(line)["text"]
            if text.startswith("No document found"):
                continue  # placeholders for PMIDs the corpus builder could not fetch
            texts.append(text)
            if len(texts) == limit:
                break
    return texts


def with_title(title: str, body: str) -> str:
    # As indexer.chunking joins a title to its chunk.
    separator = " " if title.endswith((".", "?", "!")) else ". "
    return f"{title}{separator}{body}" if title else body


def scifact(folder: Path) -> tuple[list[str], list[str], list[str], list[str], dict[str, dict[str, int]]]:
    doc_ids: list[str] = []
    docs: list[str] = []
    with gzip.open(folder / "corpus.jsonl.gz", "rt", encoding="utf-8") as lines:
        for line in lines:
            doc = json.loads(line)
            doc_ids.append(str(doc["doc_id"]))
            docs.append(with_title(doc["title"], " ".join(doc["abstract"])))
    claim_ids: list[str] = []
    claims: list[str] = []
    qrels: dict[str, dict[str, int]] = {}
    with (folder / "claims_dev.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            claim = json.loads(line)
            if not claim.get("evidence"):
                continue  # nothing to retrieve
            claim_ids.append(str(claim["id"]))
            claims.append(claim["claim"])
            qrels[str(claim["id"])] = {str(doc_id): 1 for doc_id in claim["evidence"]}
    return doc_ids, docs, claim_ids, claims, qrels


def retrieval_scores(
    doc_vectors: np.ndarray,
    claim_vectors: np.ndarray,
    doc_ids: Sequence[str],
    claim_ids: Sequence[str],
    qrels: dict[str, dict[str, int]],
) -> dict[str, float]:
    import ir_measures
    from ir_measures import R, nDCG

    similarities = claim_vectors @ doc_vectors.T
    top = np.argsort(-similarities, axis=1, kind="stable")[:, :100]
    run = {
        claim_id: {doc_ids[d]: float(similarities[row, d]) for d in top[row]} for row, claim_id in enumerate(claim_ids)
    }
    measures = ir_measures.calc_aggregate([nDCG @ 10, R @ 100], qrels, run)
    return {"ndcg@10": round(float(measures[nDCG @ 10]), 4), "recall@100": round(float(measures[R @ 100]), 4)}


def probe(variant: str, texts: Sequence[str], *, batch_size: int, threads: int, cache_dir: Path) -> dict[str, float]:
    """Runs in a child process: import and load time, then peak RSS after embedding a few texts."""
    began = time.perf_counter()
    embedder = load_variant(variant, batch_size=batch_size, threads=threads, cache_dir=cache_dir)
    load_s = time.perf_counter() - began
    embedder.embed(texts)
    return {"load_s": round(load_s, 2), "peak_rss_mib": round(peak_rss_kib() / 1024, 1)}


def peak_rss_kib() -> int:
    # VmHWM, not getrusage's ru_maxrss: Linux carries ru_maxrss across exec, so a child would report its parent's.
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def probe_in_child(variant: str, args: argparse.Namespace) -> dict[str, float]:
    command = [
        sys.executable,
        __file__,
        "--probe",
        variant,
        "--bioasq",
        str(args.bioasq),
        "--probe-texts",
        str(args.probe_texts),
        "--batch-size",
        str(args.batch_size),
        "--threads",
        str(args.threads),
        "--cache-dir",
        str(args.cache_dir),
    ]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def ensure_export(cache_dir: Path) -> float | None:
    """Seconds the one-time ONNX export took, or None when the cache already held it."""
    from indexer.onnx_export import exported_model_dir, fingerprint

    model_path = Path(resolve_model_path("minilm"))
    marker = cache_dir / "embedders"
    before = set(marker.glob(f"*-{fingerprint(model_path)}")) if marker.exists() else set()
    began = time.perf_counter()
    exported_model_dir(model_path, cache_dir, label="sentence-transformers/all-MiniLM-L6-v2")
    return None if before else round(time.perf_counter() - began, 1)


def speed_rows(
    timings: dict[str, Timing], probes: dict[str, dict[str, float]]
) -> tuple[dict[str, dict[str, Any]], np.ndarray]:
    reference = np.concatenate(timings[REFERENCE].vectors)
    rows: dict[str, dict[str, Any]] = {}
    for name, timing in timings.items():
        texts_s, tokens_s = timing.rate()
        agreement = cosines(np.concatenate(timing.vectors), reference)
        rows[name] = {
            "texts_per_s": round(texts_s, 1),
            "tokens_per_s": round(tokens_s),
            "speedup": round(texts_s / timings[REFERENCE].rate()[0], 2),
            "cosine_mean": round(float(agreement.mean()), 5),
            "cosine_min": round(float(agreement.min()), 5),
            **probes.get(name, {}),
        }
    return rows, reference


def batch_sweep(embedder: Any, sizes: Sequence[int], texts: Sequence[str], tokens: Sequence[int], chunk: int) -> Any:
    def at(size: int) -> Embed:
        def embed(part: Sequence[str]) -> np.ndarray:
            embedder.batch_size = size
            return np.asarray(embedder.embed(part))

        return embed

    timings = interleaved({str(size): at(size) for size in sizes}, texts, tokens, chunk)
    return {
        size: {"texts_per_s": round(t.rate()[0], 1), "tokens_per_s": round(t.rate()[1])} for size, t in timings.items()
    }


def print_table(rows: dict[str, dict[str, Any]], columns: Sequence[str], title: str) -> None:
    print(f"\n{title}")
    print("| variant | " + " | ".join(columns) + " |")
    print("|---|" + "---|" * len(columns))
    for name, row in rows.items():
        print(f"| {name} | " + " | ".join(str(row.get(column, "-")) for column in columns) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bioasq", type=Path, default=Path("../shared/data/bioasq/benchmark/corpus.jsonl.gz"))
    parser.add_argument("--scifact", type=Path, default=Path("../shared/data/scifact"))
    parser.add_argument("--cache-dir", type=Path, default=Path("var/models"))
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    parser.add_argument("--texts", type=int, default=600, help="BioASQ texts for the speed runs")
    parser.add_argument("--chunk", type=int, default=200, help="texts per turn when variants take turns")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--probe-texts", type=int, default=64)
    parser.add_argument("--sweep", type=int, nargs="+", default=[16, 32, 64, 128])
    parser.add_argument("--sweep-texts", type=int, default=300)
    parser.add_argument("--skip-sweep", action="store_true")
    parser.add_argument("--scifact-variants", nargs="+", default=["torch", "onnx-int8"], help="or: all")
    parser.add_argument("--skip-scifact", action="store_true")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--probe", choices=VARIANTS, help=argparse.SUPPRESS)  # child-process mode
    args = parser.parse_args()

    if args.probe:
        texts = bioasq_texts(args.bioasq, args.probe_texts)
        kwargs = {"batch_size": args.batch_size, "threads": args.threads, "cache_dir": args.cache_dir}
        print(json.dumps(probe(args.probe, texts, **kwargs)))
        return
    run(args)


def run(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    variants = [REFERENCE, *(v for v in args.variants if v != REFERENCE)]
    export_s = ensure_export(args.cache_dir) if any(v.startswith("onnx") for v in variants) else None
    probes = {variant: probe_in_child(variant, args) for variant in variants}

    kwargs = {"batch_size": args.batch_size, "threads": args.threads, "cache_dir": args.cache_dir}
    embedders = {variant: load_variant(variant, **kwargs) for variant in variants}
    texts = bioasq_texts(args.bioasq, args.texts)
    lengths = embedders[REFERENCE].token_lengths(texts)
    window = embedders[REFERENCE].max_tokens
    tokens = [min(length, window) for length in lengths]
    rows, _ = speed_rows(interleaved({n: e.embed for n, e in embedders.items()}, texts, tokens, args.chunk), probes)
    columns = ["texts_per_s", "tokens_per_s", "speedup", "cosine_mean", "cosine_min", "load_s", "peak_rss_mib"]
    print_table(
        rows,
        columns,
        f"Speed on {len(texts)} BioASQ texts (mean {np.mean(tokens):.0f} tokens), batch {args.batch_size}",
    )

    result: dict[str, Any] = {
        "texts": len(texts),
        "mean_tokens": round(float(np.mean(tokens)), 1),
        "export_s": export_s,
    }
    result["args"] = {key: str(value) for key, value in vars(args).items()}
    result["variants"] = rows
    passing = [name for name in variants if rows[name]["cosine_mean"] >= QUALITY_GATE]
    winner = max(passing, key=lambda name: rows[name]["texts_per_s"])
    result["winner"] = winner
    if not args.skip_sweep:
        count = args.sweep_texts
        sweep = batch_sweep(embedders[winner], args.sweep, texts[:count], tokens[:count], args.chunk)
        embedders[winner].batch_size = args.batch_size
        result["batch_sweep"] = {"variant": winner, "texts": count, "sizes": sweep}
        print_table(sweep, ["texts_per_s", "tokens_per_s"], f"Batch size sweep, {winner}, {count} texts")

    if not args.skip_scifact:
        chosen = variants if args.scifact_variants == ["all"] else [REFERENCE, *args.scifact_variants]
        chosen = [v for v in dict.fromkeys(chosen) if v in embedders]
        doc_ids, docs, claim_ids, claims, qrels = scifact(args.scifact)
        doc_tokens = [min(n, window) for n in embedders[REFERENCE].token_lengths(docs)]
        timings = interleaved({v: embedders[v].embed for v in chosen}, docs, doc_tokens, 1000)
        reference = np.concatenate(timings[REFERENCE].vectors)
        scifact_rows: dict[str, dict[str, Any]] = {}
        for variant in chosen:
            doc_vectors = np.concatenate(timings[variant].vectors)
            claim_vectors = embedders[variant].embed(claims)
            scifact_rows[variant] = {
                **retrieval_scores(doc_vectors, claim_vectors, doc_ids, claim_ids, qrels),
                "doc_cosine_mean": round(float(cosines(doc_vectors, reference).mean()), 5),
                "texts_per_s": round(timings[variant].rate()[0], 1),
            }
        result["scifact"] = {"claims": len(claims), "documents": len(docs), "variants": scifact_rows}
        title = f"SciFact dev retrieval, dense only, {len(claims)} claims over {len(docs)} documents"
        print_table(scifact_rows, ["ndcg@10", "recall@100", "doc_cosine_mean", "texts_per_s"], title)

    result["total_s"] = round(time.perf_counter() - started, 1)
    print(f"\nexport (one-time): {export_s if export_s is not None else 'cached'} s; total {result['total_s']} s")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
