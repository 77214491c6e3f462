"""What a person waits for, per question: from asking to the first answer word, through the running worker.

    make run                                   # the stack must be up, with a corpus indexed
    .venv/bin/python benchmarks/question_latency.py --questions 5

Each variant is a set of settings and a llama.cpp server tuning. `first-wave` reproduces the first wave's behaviour
(ten abstracts of four sentences each, the first wave's server options); `current` is the configured defaults;
`bottom-line-after` decides a yes/no question's bottom line after its answer, as before it was given to the model
first; `prompt-lookup` writes with llama.cpp's prompt-lookup decoding; `prompt-cache` has the server keep states
keyed by prompt, so the answer prompt's constant part survives the requests between two answers. The benchmark
serves the packaged model once per variant (its own servers, beside the stack's), then asks each BioASQ dev question
once per variant, taking turns in rotating order so that drift in the machine's load falls on both alike. Questions
go through the stack's Celery worker like a question from the site: the worker reads each question's own stored
settings, the variant's, which the question takes from `settings.VERIMED` when it is created (`Variant.config`).

Per question and variant it reports `wait_to_first_token_ms` (from the question's creation to its first token) and
`done_ms` (to the answer verified) beside the stage timings the worker recorded, the writing rate, the prompt's
token count and the answer's sentences; per variant the prompt's constant part in tokens, and the server's prompt-
reading rate from the fixed probe (generator.reading_rate), measured before and after the questions. Prints a table
and writes JSON (--out).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")

from generator.answer import CHAT_TOKENS_PER_MESSAGE, answer_prompt
from generator.base import LLMSettings
from generator.reading_rate import measure_reading_rate
from generator.registry import build_token_counter
from generator.serve import ServerTuning, served_model
from webapp.config import VerimedConfig

if TYPE_CHECKING:
    from webapp.qa.models import Question  # a model: imported once Django is set up

STAGES = ("queue", "retrieval", "consensus", "context", "generation_ttft", "generation", "verification")
PROMPT_LOOKUP_TOKENS = 10  # llama-cpp-python's server default
# Room for a few dozen states of the 1.5B: its keys and values take about 28 KB a token, an answer prompt 1,000-1,500.
PROMPT_CACHE_MB = 512


@dataclass(frozen=True)
class Variant:
    # VERIMED_* variables the question is created under. They are set on the settings tree (`settings.VERIMED`), which
    # is where a question's stored settings come from: set as Django settings of their own, no code would read them.
    settings: dict[str, Any] = field(default_factory=dict)
    tuning: ServerTuning = field(default_factory=ServerTuning)

    def config(self, base: VerimedConfig, *, base_url: str, model: str) -> VerimedConfig:
        """`base` with this variant's settings, asking the variant's own server; each value checked as at start-up."""
        return base.replace(**self.settings, VERIMED_LLM_BASE_URL=base_url, VERIMED_LLM_MODEL=model)


VARIANTS = {
    "first-wave": Variant(
        settings={
            "VERIMED_PROMPT_STYLE": "chat",
            "VERIMED_ABSTRACTS_IN_PROMPT": 10,
            "VERIMED_SENTENCES_PER_ABSTRACT": 4,
        },
        tuning=ServerTuning(batch=512, flash_attention=False, prompt_cache_mb=0),
    ),
    "current": Variant(),
    # A yes/no question's bottom line decided after the answer, as before it was given to the model first: the
    # difference in the wait to the first token is what deciding it first costs.
    "bottom-line-after": Variant(settings={"VERIMED_BOTTOM_LINE_FIRST": False}),
    # Guessed tokens checked in one step: greedy answers keep every token (tests/generator/test_prompt_lookup.py). The
    # setting is stored with each answer; the tuning is what the server runs.
    "prompt-lookup": Variant(
        settings={"VERIMED_LLM_PROMPT_LOOKUP_TOKENS": PROMPT_LOOKUP_TOKENS},
        tuning=ServerTuning(prompt_lookup_tokens=PROMPT_LOOKUP_TOKENS),
    ),
    # Saved states keyed by prompt: without them the server reuses only the previous request's prefix, and a yes/no
    # question's reading of its closest abstract, asked just before the answer, has replaced the answer's fixed part.
    "prompt-cache": Variant(tuning=ServerTuning(prompt_cache_mb=PROMPT_CACHE_MB)),
}


def question_under(text: str, variant: Variant, base_url: str, model: str, *, enqueue: bool = True) -> Question:
    """The question created with the variant's settings and server, handed to the worker once stored (`enqueue`)."""
    from django.conf import settings
    from django.test import override_settings

    from webapp.qa.services.admission import question_create

    with override_settings(VERIMED=variant.config(settings.VERIMED, base_url=base_url, model=model)):
        return question_create(text=text, enqueue=enqueue)


def ask(text: str, variant: Variant, base_url: str, model: str, timeout: float) -> dict[str, Any]:
    """One question through the worker under the variant's settings and server; its stored timings."""
    from webapp.qa import selectors
    from webapp.qa.models import Question

    question = question_under(text, variant, base_url, model)
    if not selectors.question_wait_finished(question_id=question.pk, timeout=timeout):
        raise SystemExit(f"no answer within {timeout:.0f} s: is the worker running (make run)?")
    question.refresh_from_db()
    if question.status == Question.Status.FAILED:
        raise SystemExit(f"question failed: {question.error}")
    waited = question.first_token_at - question.created_at if question.first_token_at else None
    # The row's last write is the one that marks it done (or its verification unavailable).
    done = question.updated_at - question.created_at
    sentences = list(question.sentences.all())
    return {
        "question": text,
        "wait_to_first_token_ms": round(waited.total_seconds() * 1000, 1) if waited else None,
        "done_ms": round(done.total_seconds() * 1000, 1),
        "tokens_per_s": question.timings_ms.get("generation_tokens_per_s"),
        "tokens": question.timings_ms.get("generation_tokens"),
        "yes_no": question.consensus is not None,
        **{stage: question.timings_ms.get(stage) for stage in STAGES},
        "prompt_tokens": question.context.get("prompt_tokens"),
        "abstracts_given": len(question.context.get("given", [])),
        "sentences": len(sentences),
        "cited_sentences": sum(1 for sentence in sentences if sentence.citations.exists()),
        "answer_raw": question.answer_raw,
    }


def fixed_prefix_tokens(config: VerimedConfig, endpoint: LLMSettings) -> int:
    """Tokens of the answer prompt's constant part under `config` (the turns before the question's own: the system
    prompt and the worked example), counted by the variant's server; the rest of a prompt is the sources and the
    question. 0 for a style whose prompt starts with the question."""
    generation = config.generation
    if generation.prompt_style == "verifai":
        return 0
    prefix = answer_prompt(generation.prompt_style, "", [], abstract_chars=generation.abstract_chars).messages[:-1]
    counter = build_token_counter(endpoint)
    return counter.count("\n".join(message["content"] for message in prefix)) + CHAT_TOKENS_PER_MESSAGE * len(prefix)


def _shown(value: int | None) -> str:
    return "-" if value is None else str(value)


def _same_answers(rows: list[dict[str, Any]], name: str) -> int:
    current = {row["question"]: row["answer_raw"] for row in rows if row["variant"] == "current"}
    return sum(row["answer_raw"] == current.get(row["question"]) for row in rows if row["variant"] == name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=5)
    parser.add_argument("--variants", nargs="+", choices=sorted(VARIANTS), default=["first-wave", "current"])
    parser.add_argument("--timeout", type=float, default=900.0, help="Seconds one question may take.")
    parser.add_argument("--out", type=Path, default=Path("var/benchmarks/question_latency.json"))
    args = parser.parse_args()

    import django

    django.setup()
    from django.conf import settings

    model = settings.VERIMED.llm.model
    dev = settings.VERIMED.paths.data_dir / "bioasq" / "benchmark" / "questions_dev.jsonl"
    questions = [json.loads(line)["body"] for line in dev.open()][: args.questions]
    rows: list[dict[str, Any]] = []
    rates: dict[str, list[dict[str, Any]]] = {}
    with ExitStack() as servers:
        urls = {}
        for name in args.variants:
            print(f"serving {model} for {name} …", file=sys.stderr, flush=True)
            urls[name] = servers.enter_context(
                served_model(
                    model,
                    cache=settings.VERIMED.paths.model_cache,
                    n_ctx=settings.VERIMED.generation.context_tokens,
                    tuning=VARIANTS[name].tuning,
                )
            )
        endpoints = {name: LLMSettings(base_url=url, model=model, timeout_seconds=600) for name, url in urls.items()}
        rates = {name: [measure_reading_rate(endpoint).as_dict()] for name, endpoint in endpoints.items()}
        fixed = {
            name: fixed_prefix_tokens(
                VARIANTS[name].config(settings.VERIMED, base_url=urls[name], model=model), endpoints[name]
            )
            for name in args.variants
        }
        for number, text in enumerate(questions):
            shift = number % len(args.variants)
            for name in args.variants[shift:] + args.variants[:shift]:
                row = ask(text, VARIANTS[name], urls[name], model, args.timeout)
                rows.append({"variant": name, **row})
                print(f"{name}: {row['wait_to_first_token_ms']} ms to the first token", file=sys.stderr, flush=True)
        for name, endpoint in endpoints.items():
            rates[name].append(measure_reading_rate(endpoint).as_dict())

    print(
        f"{'variant':<11} {'question':<40} {'wait 1st tok':>12} "
        + " ".join(f"{stage:>15}" for stage in STAGES)
        + "  prompt tok  cited/sent."
    )
    for row in rows:
        timings = " ".join(f"{(row[stage] or 0) / 1000:>14.1f}s" for stage in STAGES)
        cited = f"{row['cited_sentences']}/{row['sentences']}"
        print(
            f"{row['variant']:<11} {row['question'][:40]:<40} {(row['wait_to_first_token_ms'] or 0) / 1000:>11.1f}s "
            f"{timings}  {row['prompt_tokens'] or 0:>10} {cited:>12}"
        )
    summary: dict[str, dict[str, Any]] = {}
    for name in args.variants:
        mine = [row for row in rows if row["variant"] == name]
        waits = [row["wait_to_first_token_ms"] for row in mine if row["wait_to_first_token_ms"] is not None]
        summary[name] = {
            "wait_to_first_token_ms_p50": statistics.median(waits) if waits else None,
            "done_ms_p50": statistics.median(row["done_ms"] for row in mine),
            "tokens_per_s_p50": statistics.median(row["tokens_per_s"] or 0 for row in mine),
            **{f"{stage}_ms_p50": statistics.median(row[stage] or 0 for row in mine) for stage in STAGES},
            "prompt_tokens_p50": statistics.median(row["prompt_tokens"] or 0 for row in mine),
            "fixed_prefix_tokens": fixed[name],
            "cited_sentences_mean": statistics.fmean(row["cited_sentences"] for row in mine),
            # Decoding levers must keep every token at temperature 0: the answers that match `current`'s word for word.
            "same_answer_as_current": _same_answers(rows, name) if "current" in args.variants else None,
            "probe_tokens_per_s": [rate["tokens_per_s"] for rate in rates[name]],
            "tuning": VARIANTS[name].tuning.__dict__,
            "settings": VARIANTS[name].settings,
        }
    print()
    print(
        f"{'variant':<17} {'1st token p50':>13} {'done p50':>9} {'written tok/s':>13} {'prompt tok':>11} "
        f"{'fixed part':>10} {'cited sent.':>12} {'same as current':>15}  probe tokens/s read (before, after)"
    )
    for name, figures in summary.items():
        probe = ", ".join(str(rate) for rate in figures["probe_tokens_per_s"])
        print(
            f"{name:<17} {(figures['wait_to_first_token_ms_p50'] or 0) / 1000:>12.1f}s "
            f"{figures['done_ms_p50'] / 1000:>8.1f}s {figures['tokens_per_s_p50']:>13.1f} "
            f"{figures['prompt_tokens_p50']:>11.0f} {figures['fixed_prefix_tokens']:>10} "
            f"{figures['cited_sentences_mean']:>12.1f} {_shown(figures['same_answer_as_current']):>15}  {probe}"
        )
    if len(args.variants) == 2:
        before, after = (summary[name]["wait_to_first_token_ms_p50"] for name in args.variants)
        if before and after:
            print(f"wait to first token p50: {args.variants[1]} / {args.variants[0]} = {after / before:.2f}")
    machine = {"cpus": os.cpu_count(), "platform": platform.platform(), "llm": model}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"machine": machine, "summary": summary, "questions": rows}, indent=2))
    print(f"written: {args.out}")


if __name__ == "__main__":
    main()
