"""Per-stage latency of the question pipeline on BioASQ dev questions, through the running worker.

    make run                                   # the stack must be up, with the demo corpus indexed
    .venv/bin/python benchmarks/question_latency.py --questions 5

Prints a table (one row per question, then median and max per stage) and writes the raw results as JSON.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")

STAGES = ("retrieval", "context", "generation_ttft", "generation", "verification")


def ask(question: str) -> dict[str, Any]:
    from django.core.management import call_command

    out = io.StringIO()
    call_command("ask", question, "--json", stdout=out)
    result: dict[str, Any] = json.loads(out.getvalue())
    return result


def summarise(result: dict[str, Any], gold: set[str]) -> dict[str, Any]:
    retrieved = [doc["pmid"] for doc in result["retrieved"]]
    labels = [v["label"] for s in result["sentences"] for v in s["verdicts"].values()]
    return {
        "question": result["question"],
        **{stage: result["timings_ms"].get(stage) for stage in STAGES},
        "gold_in_top10": len(gold & set(retrieved)),
        "sentences": len(result["sentences"]),
        "cited_sentences": sum(1 for s in result["sentences"] if s["citations"]),
        "labels": {label: labels.count(label) for label in sorted(set(labels))},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=5)
    parser.add_argument("--out", type=Path, default=Path("var/benchmarks/question_latency.json"))
    args = parser.parse_args()

    import django

    django.setup()
    from django.conf import settings

    dev = settings.VERIMED_DATA_DIR / "bioasq" / "benchmark" / "questions_dev.jsonl"
    questions = [json.loads(line) for line in dev.open()][: args.questions]
    rows = [summarise(ask(q["body"]), set(q["gold_pmids"])) for q in questions]

    print(f"{'question':<48} " + " ".join(f"{stage:>15}" for stage in STAGES) + "  gold@10 cited")
    for row in rows:
        timings = " ".join(f"{(row[stage] or 0) / 1000:>14.1f}s" for stage in STAGES)
        cited = f"{row['cited_sentences']}/{row['sentences']}"
        print(f"{row['question'][:48]:<48} {timings}  {row['gold_in_top10']:>7} {cited}")
    summary = {
        stage: {
            "median_ms": statistics.median(row[stage] or 0 for row in rows),
            "max_ms": max(row[stage] or 0 for row in rows),
        }
        for stage in STAGES
    }
    print(f"{'median':<48} " + " ".join(f"{summary[s]['median_ms'] / 1000:>14.1f}s" for s in STAGES))
    print(f"{'max':<48} " + " ".join(f"{summary[s]['max_ms'] / 1000:>14.1f}s" for s in STAGES))
    machine = {"cpus": os.cpu_count(), "platform": platform.platform(), "llm": settings.VERIMED_LLM_MODEL}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"machine": machine, "summary": summary, "questions": rows}, indent=2))
    print(f"written: {args.out}")


if __name__ == "__main__":
    main()
