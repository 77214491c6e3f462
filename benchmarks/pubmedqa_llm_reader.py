"""How well does the answer LLM read a PubMedQA question's own abstract? A ceiling for the bottom line (issue 32).

    .venv/bin/python benchmarks/pubmedqa_llm_reader.py --limit 150 --json var/benchmarks/pubmedqa-llm-reader.json

The bottom line must be right on 0.65 of PubMedQA's test questions from the question alone, over thousands of
abstracts. This asks an easier question of the LLM: given the question's own abstract as the product indexes it (PQA-L's
context paragraphs and its conclusion, `verifier.yes_no_sets.pubmedqa_records`: an oracle retrieval), answer yes, no
or maybe. It reads the probabilities of the first answer token, so no
parsing of free text decides anything. Items: PQA-L outside the official test ids (dev), PMIDs sorted and shuffled
with seed 0, the first `--limit`; the test split is never read.

Reported, with 95% Wilson intervals where they are accuracies:
- `argmax_accuracy`: the likeliest of yes / no / maybe, as the model answers;
- `auc_no_vs_yes`: how well log p(no)/p(yes) orders the gold "no" items above the gold "yes" ones;
- `best_band_accuracy`: the best three-way accuracy of any two thresholds on that log ratio (yes below the first, no
  above the second, maybe between), chosen on these same items: optimistic on purpose, a ceiling rather than an
  estimate, since a rule fitted elsewhere would do no better;
- `always_yes_accuracy`: the majority answer, for scale.
The model runs in-process under llama-cpp-python (one thread, as the test session's server), since the product's
server does not return token probabilities. Prints a table and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sklearn.metrics import roc_auc_score

from generator.model_files import assemble
from generator.yes_no_reading import reading_messages
from verifier.answer_evaluation import wilson_interval
from verifier.yes_no_sets import pubmedqa_records

ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("VERIMED_DATA_DIR", ROOT.parent / "shared" / "data"))
MODEL_CACHE = Path(os.environ.get("VERIMED_MODEL_CACHE", Path.home() / ".cache" / "verimed" / "models"))
ANSWERS = ("yes", "no", "maybe")


def dev_items(pqal: dict[str, Any], test_ids: set[str], limit: int) -> list[tuple[str, dict[str, Any]]]:
    keys = sorted(key for key in pqal if key not in test_ids)
    random.Random(0).shuffle(keys)
    return [(key, pqal[key]) for key in keys[:limit]]


def answer_probabilities(llm: Any, question: str, abstract: str) -> tuple[dict[str, float], int]:
    """p(yes), p(no), p(maybe) of the first answer token (summed over its spellings among the top 20), and the prompt's
    length in tokens."""
    # The product's prompt (generator.yes_no_reading), which the bottom line's reading of the closest abstract asks.
    reply = llm.create_chat_completion(
        reading_messages(question, abstract), max_tokens=1, temperature=0, logprobs=True, top_logprobs=20
    )
    probabilities = dict.fromkeys(ANSWERS, 0.0)
    for candidate in reply["choices"][0]["logprobs"]["content"][0]["top_logprobs"]:
        word = candidate["token"].strip().lower()
        if word in probabilities:
            probabilities[word] += math.exp(candidate["logprob"])
    return probabilities, int(reply["usage"]["prompt_tokens"])


def no_over_yes(probabilities: dict[str, float]) -> float:
    return math.log((probabilities["no"] + 1e-6) / (probabilities["yes"] + 1e-6))


def best_band(scores: list[float], golds: list[str]) -> tuple[int, float, float]:
    """The most items right under any (low, high) thresholds: yes when score < low, no when > high, maybe between."""
    cuts = sorted({*scores, -math.inf, math.inf})
    best = (-1, 0.0, 0.0)
    for i, low in enumerate(cuts):
        for high in cuts[i:]:
            right = sum(
                gold == ("yes" if score < low else "no" if score > high else "maybe")
                for score, gold in zip(scores, golds, strict=True)
            )
            if right > best[0]:
                best = (right, low, high)
    return best


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    golds = [row["gold"] for row in rows]
    scores = [no_over_yes(row["probabilities"]) for row in rows]
    n = len(rows)
    argmax_right = sum(max(ANSWERS, key=row["probabilities"].__getitem__) == row["gold"] for row in rows)
    band_right, low, high = best_band(scores, golds)
    yes_no = [(score, gold == "no") for score, gold in zip(scores, golds, strict=True) if gold != "maybe"]
    always_yes = golds.count("yes")
    return {
        "n": n,
        "gold_counts": {answer: golds.count(answer) for answer in ANSWERS},
        "argmax_accuracy": round(argmax_right / n, 3),
        "argmax_accuracy_95ci": list(wilson_interval(argmax_right, n)),
        "auc_no_vs_yes": round(float(roc_auc_score([is_no for _, is_no in yes_no], [s for s, _ in yes_no])), 3),
        "best_band_accuracy": round(band_right / n, 3),
        "best_band_accuracy_95ci": list(wilson_interval(band_right, n)),
        "best_band_thresholds": [round(low, 3), round(high, 3)],
        "always_yes_accuracy": round(always_yes / n, 3),
        "always_yes_accuracy_95ci": list(wilson_interval(always_yes, n)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=150)
    parser.add_argument("--model", default="qwen2.5-coder-1.5b-instruct")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    from llama_cpp import Llama  # imported here: loading the library is slow and --help should not wait for it

    pqal_path = DATA_DIR / "pubmedqa" / "ori_pqal.json"
    pqal = json.loads(pqal_path.read_text())
    abstracts = {record.pmid: record.abstract for record in pubmedqa_records(pqal_path)}
    test_ids = set(json.loads((DATA_DIR / "pubmedqa" / "test_ground_truth.json").read_text()))
    llm = Llama(
        model_path=str(assemble(args.model, MODEL_CACHE)),
        n_ctx=2048, n_threads=1, n_batch=128, logits_all=True, verbose=False,
    )  # fmt: skip
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    prompt_tokens = 0
    for pmid, item in dev_items(pqal, test_ids, args.limit):
        probabilities, tokens = answer_probabilities(llm, item["QUESTION"], abstracts[pmid])
        prompt_tokens += tokens
        rows.append({"pmid": pmid, "gold": item["final_decision"], "probabilities": probabilities})
        print(f"{len(rows):4d} {pmid} gold {item['final_decision']:5s} "
              + " ".join(f"{a} {p:.3f}" for a, p in probabilities.items()), flush=True)  # fmt: skip
    seconds = time.perf_counter() - started
    summary = summarise(rows)
    summary.update(
        model=args.model,
        seconds=round(seconds, 1),
        prompt_tokens=prompt_tokens,
        machine=f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
    )
    print()
    print("| measure | value | 95% interval |")
    print("|---|---|---|")
    for name in ("argmax_accuracy", "best_band_accuracy", "always_yes_accuracy"):
        low, high = summary[f"{name}_95ci"]
        print(f"| {name} | {summary[name]:.3f} | {low:.3f}-{high:.3f} |")
    print(f"| auc_no_vs_yes | {summary['auc_no_vs_yes']:.3f} | |")
    print(f"\n{summary['n']} dev items {summary['gold_counts']}, {seconds:.0f} s, {prompt_tokens} prompt tokens")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"summary": summary, "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
