"""The few-shot LLM judge on SciFact dev pairs, as the pipeline runs it: evidence picked by `select_evidence`.

    python -m generator.serve --port 8081 &            # or a running `make run`
    .venv/bin/python benchmarks/judge_scifact.py --pairs 90

Pairs are (claim, cited abstract): SUPPORT / CONTRADICT where SciFact has rationale sentences for that abstract,
NO_EVIDENCE where the claim cites it without evidence. The same number of each label is drawn, in file order.
Prints per-label precision/recall, macro-F1 and the confusion matrix; writes JSON.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from generator.llm import LLMSettings, OpenAICompatibleLLM
from indexer.embedder import SentenceTransformerEmbedder
from verifier.evidence import select_evidence
from verifier.llm_judge import LABELS, LlmJudge

DATA = Path(os.environ.get("VERIMED_DATA_DIR", Path(__file__).resolve().parents[2] / "shared" / "data"))


def load_pairs(per_label: int) -> list[tuple[str, list[str], str]]:
    corpus = {}
    with gzip.open(DATA / "scifact" / "corpus.jsonl.gz", "rt") as stream:
        for line in stream:
            doc = json.loads(line)
            corpus[str(doc["doc_id"])] = doc["abstract"]
    buckets: dict[str, list[tuple[str, list[str], str]]] = {label: [] for label in LABELS}
    for line in (DATA / "scifact" / "claims_dev.jsonl").open():
        claim = json.loads(line)
        for doc_id in map(str, claim["cited_doc_ids"]):
            evidence = claim["evidence"].get(doc_id)
            label = evidence[0]["label"] if evidence else "NO_EVIDENCE"
            label = "CONTRADICT" if label in ("CONTRADICT", "REFUTE") else label
            if doc_id in corpus and len(buckets[label]) < per_label:
                buckets[label].append((claim["claim"], corpus[doc_id], label))
    return [pair for label in LABELS for pair in buckets[label]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=90, help="Total pairs, split evenly across the labels.")
    parser.add_argument("--base-url", default=os.environ.get("VERIMED_LLM_BASE_URL", "http://127.0.0.1:8081/v1"))
    parser.add_argument("--model", default=os.environ.get("VERIMED_LLM_MODEL", "qwen2.5-coder-1.5b-instruct"))
    parser.add_argument("--out", type=Path, default=Path("var/benchmarks/judge_scifact.json"))
    args = parser.parse_args()

    judge = LlmJudge(OpenAICompatibleLLM(LLMSettings(base_url=args.base_url, model=args.model)))
    embedder = SentenceTransformerEmbedder(threads=2)
    pairs = load_pairs(args.pairs // len(LABELS))
    confusion: Counter[tuple[str, str]] = Counter()
    started = time.perf_counter()
    for claim, sentences, gold in pairs:
        chosen = sorted(select_evidence(claim, sentences, embedder=embedder, top_n=2))
        predicted = judge.judge(claim, " ".join(sentences[i] for i in chosen)).label
        confusion[(gold, predicted)] += 1
    seconds = time.perf_counter() - started

    scores = {}
    print(f"{'label':<12} {'precision':>9} {'recall':>7} {'f1':>6}")
    for label in LABELS:
        true_positive = confusion[(label, label)]
        predicted = sum(count for (_, guess), count in confusion.items() if guess == label)
        actual = sum(count for (gold, _), count in confusion.items() if gold == label)
        precision = true_positive / predicted if predicted else 0.0
        recall = true_positive / actual if actual else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        scores[label] = {"precision": precision, "recall": recall, "f1": f1}
        print(f"{label:<12} {precision:>9.2f} {recall:>7.2f} {f1:>6.2f}")
    macro_f1 = sum(score["f1"] for score in scores.values()) / len(LABELS)
    print(f"macro-F1 {macro_f1:.3f} over {len(pairs)} pairs, {seconds / len(pairs):.2f} s per pair")
    print("confusion (gold -> predicted):")
    for gold in LABELS:
        print(f"  {gold:<12} " + " ".join(f"{confusion[(gold, guess)]:>4}" for guess in LABELS))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "model": args.model,
                "pairs": len(pairs),
                "macro_f1": macro_f1,
                "per_label": scores,
                "seconds_per_pair": seconds / len(pairs),
                "confusion": {f"{gold}->{guess}": count for (gold, guess), count in confusion.items()},
            },
            indent=2,
        )
    )
    print(f"written: {args.out}")


if __name__ == "__main__":
    main()
