"""How long verifying one answer takes: 6 claims citing 10 abstracts, with the product's verifier and tagger.

    .venv/bin/python benchmarks/verify_latency.py --repeats 5

The abstracts are 10 SciFact dev documents; each claim is a SciFact dev claim, cited against 1-2 of them (10
citations). "cold" is the first answer a fresh worker verifies (models loaded, no sentence vectors cached);
"warm" repeats the same answer, as when the same abstracts come back for a related question (the worker keeps
sentence vectors per text). Prints a table and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")

import django

django.setup()

from django.conf import settings  # noqa: E402

from generator.claims import Claim  # noqa: E402
from verifier.datasets import DEV_SPLITS, read_split  # noqa: E402
from verifier.verify import CitedAbstract  # noqa: E402
from webapp.qa.pipeline import default_pipeline_settings  # noqa: E402
from webapp.qa.verification import answer_verifier  # noqa: E402


def answer() -> tuple[list[Claim], dict[str, CitedAbstract]]:
    pairs = [pair for pair in read_split(settings.VERIMED.paths.data_dir, DEV_SPLITS[0]) if pair.rationale]
    documents: dict[str, CitedAbstract] = {}
    for pair in pairs:
        if len(documents) == 10:
            break
        document = pair.document
        documents.setdefault(
            document.doc_id, CitedAbstract(document.doc_id, document.title, " ".join(document.sentences))
        )
    ids = list(documents)
    citations = [ids[0:2], ids[2:4], ids[4:6], ids[6:8], ids[8:9], ids[9:10]]  # 10 citations over 6 claims
    claims = [
        Claim(text=pairs[i].claim, display_text=pairs[i].claim, citations=tuple(c)) for i, c in enumerate(citations)
    ]
    return claims, documents


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path, default=Path("var/benchmarks/verify_latency.json"))
    options = parser.parse_args()
    claims, abstracts = answer()
    started = time.perf_counter()
    verifier = answer_verifier(default_pipeline_settings())
    verifier.classifier.classify([("warm up", "warm up")])
    load_seconds = time.perf_counter() - started
    timings = []
    for _ in range(options.repeats + 1):
        started = time.perf_counter()
        results = verifier.verify(claims, abstracts, set(abstracts))
        timings.append(time.perf_counter() - started)
    cold, warm = timings[0], timings[1:]
    report = {
        "claims": len(claims),
        "citations": sum(len(result.citations) for result in results),
        "verifier": verifier.classifier.model_id,
        "evidence": verifier.evidence.model_id,
        "load_s": round(load_seconds, 2),
        "cold_s": round(cold, 3),
        "warm_s_median": round(statistics.median(warm), 3),
        "warm_s_max": round(max(warm), 3),
        "torch_threads": settings.VERIMED.engines.torch_threads,
        "cpus": os.cpu_count(),
    }
    print(f"{'what':<28}{'seconds':>10}")
    for key in ("load_s", "cold_s", "warm_s_median", "warm_s_max"):
        print(f"{key:<28}{report[key]:>10}")
    print(f"{report['claims']} claims, {report['citations']} citations; {report['verifier']} + {report['evidence']}")
    options.json.parent.mkdir(parents=True, exist_ok=True)
    options.json.write_text(json.dumps(report, indent=2))
    print(f"wrote {options.json}")


if __name__ == "__main__":
    main()
