"""How fast llama.cpp reads prompts under each server setting, on this machine, side by side in one run.

    .venv/bin/python benchmarks/llm_server_settings.py --json var/benchmarks/llm-server-settings.json

Each variant is a `generator.serve.ServerTuning` (threads, batch, flash attention, prompt cache, prompt logits). For
each, in turn, a fresh server is started and measured:
- `probe_tokens_per_s`: the fixed probe of generator.reading_rate (median of --probes), a prompt no cache can serve;
- `cold_answer_ttft_ms`: time to the first token of a real answer prompt A (the chat prompt with its worked example
  and --abstracts BioASQ abstracts, as the product builds it) on a server that has just read the probe;
- `warm_prefix_ttft_ms`: prompt B, another question, straight after A, as answers follow each other in the product:
  llama.cpp keeps the previous prompt's state and skips the prefix they share (system prompt and worked example);
- `after_other_request_ttft_ms`: prompt C (B's abstracts in reverse order: as long as B, sharing only the constant
  prefix with it) after a probe request in between, as a judge call or a follow-up rewrite would come between two
  answers: only the prompt cache lets this one skip the constant prefix;
- `write_tokens_per_s`: the rate at which it then writes --write-tokens more of answer C, timed from its first token
  (the same prompt again, so it is read from the state just left).
Variants run one after another, so compare them only within one run; the table gives each one's ratio to the first.

`--busy 0 1` measures every variant alone and again beside one CPU-bound process (a busy loop standing in for a test
worker, the verifier or the background embedder), started once the server is up: llama.cpp's threads wait for each
other at every step, so a core taken by another process slows a server that counts on it far more than its share.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from generator.answer import ContextAbstract, answer_prompt
from generator.base import LLMSettings, SamplingOptions
from generator.llm import OpenAICompatibleLLM
from generator.reading_rate import measure_reading_rate
from generator.serve import ServerTuning, served_model
from indexer.readers import read_articles
from indexer.records import ReadStats

THREADS = os.cpu_count() or 2
VARIANTS: dict[str, ServerTuning] = {
    "today": ServerTuning(threads=THREADS, batch=512, flash_attention=False, prompt_cache_mb=0),
    "batch-128": ServerTuning(threads=THREADS, batch=128),
    "batch-2048": ServerTuning(threads=THREADS, batch=2048),
    "flash-attention": ServerTuning(threads=THREADS, flash_attention=True),
    "prompt-cache": ServerTuning(threads=THREADS, prompt_cache_mb=1024),
    "one-thread": ServerTuning(threads=1),
    # llama-cpp-python's server default before 2026-11-29: every prompt token's logits kept.
    "prompt-logits": ServerTuning(threads=THREADS, prompt_logits=True),
}


def answer_prompts(data_dir: Path, abstracts: int) -> list[Any]:
    """Prompts A, B and C: two BioASQ dev questions with abstracts from the benchmark corpus (their own gold ones),
    cut to 1,500 characters each as the product's prompt is; C is B with its abstracts in reverse order."""
    records = read_articles(data_dir / "bioasq/benchmark/corpus.jsonl.gz", ReadStats())
    corpus = {record.pmid: ContextAbstract(record.pmid, record.title, record.abstract) for record in records}
    chosen: list[tuple[str, list[ContextAbstract]]] = []
    with (data_dir / "bioasq/benchmark/questions_dev.jsonl").open() as lines:
        for line in lines:
            question = json.loads(line)
            given = [corpus[pmid] for pmid in question["gold_pmids"] if pmid in corpus][:abstracts]
            if len(given) == abstracts:
                chosen.append((question["body"], given))
            if len(chosen) == 2:
                (question_a, given_a), (question_b, given_b) = chosen
                return [
                    answer_prompt("chat", question_a, given_a, abstract_chars=1500),
                    answer_prompt("chat", question_b, given_b, abstract_chars=1500),
                    answer_prompt("chat", question_b, given_b[::-1], abstract_chars=1500),
                ]
    raise SystemExit(f"fewer than two dev questions have {abstracts} gold abstracts in the benchmark corpus")


def first_token_ms(llm: OpenAICompatibleLLM, prompt: Any) -> float:
    """Time to the first token of a four-token answer, read to its end: llama.cpp saves a prompt's state to its
    prompt cache only when the request finishes, as the product's answers do."""
    started = time.perf_counter()
    elapsed = None
    for _ in llm.stream_chat(list(prompt.messages), SamplingOptions(max_tokens=4)):
        elapsed = elapsed or (time.perf_counter() - started) * 1000
    return round(elapsed or 0.0, 1)


@contextmanager
def busy_processes(count: int) -> Iterator[None]:
    """`count` processes that each keep one core busy, for the duration of the block."""
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


def write_rate(llm: OpenAICompatibleLLM, prompt: Any, tokens: int) -> float:
    """Tokens written per second after the first one, for an answer of `tokens` tokens."""
    started = None
    deltas = 0
    for _ in llm.stream_chat(list(prompt.messages), SamplingOptions(max_tokens=tokens)):
        started = started or time.perf_counter()
        deltas += 1
    elapsed = time.perf_counter() - (started or time.perf_counter())
    return round((deltas - 1) / elapsed, 2) if deltas > 1 and elapsed > 0 else 0.0


def measure(name: str, tuning: ServerTuning, args: argparse.Namespace, prompts: list[Any], busy: int) -> dict[str, Any]:
    with served_model(args.model, cache=args.cache, tuning=tuning) as base_url, busy_processes(busy):
        endpoint = LLMSettings(base_url=base_url, model=args.model, timeout_seconds=900)
        llm = OpenAICompatibleLLM(endpoint)
        rates = [measure_reading_rate(endpoint) for _ in range(args.probes)]
        cold = first_token_ms(llm, prompts[0])
        warm = first_token_ms(llm, prompts[1])
        measure_reading_rate(endpoint)  # another request between two answers
        after_other = first_token_ms(llm, prompts[2])
        writing = write_rate(llm, prompts[2], args.write_tokens)
    return {
        "variant": name,
        "busy_processes": busy,
        "tuning": tuning.__dict__,
        "probe_tokens_per_s": statistics.median(rate.tokens_per_s for rate in rates),
        "probe_prompt_tokens": rates[0].prompt_tokens,
        "cold_answer_ttft_ms": cold,
        "warm_prefix_ttft_ms": warm,
        "after_other_request_ttft_ms": after_other,
        "write_tokens_per_s": writing,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen2.5-coder-1.5b-instruct")
    parser.add_argument("--cache", type=Path, default=Path("var/models"), help="Where the model files are joined.")
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ.get("VERIMED_DATA_DIR", "../shared/data")))
    parser.add_argument("--variants", nargs="+", choices=sorted(VARIANTS), default=list(VARIANTS))
    parser.add_argument("--rounds", type=int, default=1, help="Measure every variant this many times, in turn.")
    parser.add_argument("--probes", type=int, default=3)
    parser.add_argument("--abstracts", type=int, default=5)
    parser.add_argument("--write-tokens", type=int, default=40, help="Answer length for the writing rate.")
    parser.add_argument(
        "--busy", type=int, nargs="+", default=[0], help="CPU-bound processes beside the server: each count in turn."
    )
    parser.add_argument("--json", type=Path, default=Path("var/benchmarks/llm-server-settings.json"))
    args = parser.parse_args()

    prompts = answer_prompts(args.data_dir, args.abstracts)
    rows = []
    for round_number in range(1, args.rounds + 1):
        for name in args.variants:
            for busy in args.busy:
                rows.append({"round": round_number, **measure(name, VARIANTS[name], args, prompts, busy)})
                print(f"measured {name}, {busy} busy (round {round_number})", file=sys.stderr, flush=True)
    base = rows[0]
    header = f"{'variant':<16} {'busy':>4} {'probe tok/s':>12} {'cold TTFT s':>12} {'warm prefix s':>14}"
    print(f"{header} {'after other s':>14} {'write tok/s':>12} {'after other vs first':>21}")
    for row in rows:
        ratio = row["after_other_request_ttft_ms"] / base["after_other_request_ttft_ms"]
        print(
            f"{row['variant']:<16} {row['busy_processes']:>4} {row['probe_tokens_per_s']:>12.1f} "
            f"{row['cold_answer_ttft_ms'] / 1000:>12.1f} "
            f"{row['warm_prefix_ttft_ms'] / 1000:>14.1f} {row['after_other_request_ttft_ms'] / 1000:>14.1f} "
            f"{row['write_tokens_per_s']:>12.1f} {ratio:>21.2f}x"
        )
    machine = {"cpus": os.cpu_count(), "platform": platform.platform(), "processor": platform.processor()}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"machine": machine, "model": args.model, "variants": rows}, indent=2))
    print(f"written: {args.json}")


if __name__ == "__main__":
    main()
