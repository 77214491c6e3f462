"""Measure a stage of the pipeline on labelled data; prints a table and writes JSON.

    manage.py evaluate retrieval --corpus ../shared/data/bioasq/benchmark/corpus.jsonl.gz \\
        ../shared/data/bioasq/benchmark/distractors.jsonl.gz \\
        --questions ../shared/data/bioasq/benchmark/questions_dev.jsonl \\
        --qrels ../shared/data/bioasq/benchmark/qrels_dev.tsv --json var/benchmarks/retrieval-bioasq.json
    manage.py evaluate generation --pubmedqa ../shared/data/pubmedqa/ori_pqal.json --limit 50 \\
        --serve qwen2.5-coder-1.5b-instruct --serve qwen2.5-coder-0.5b-instruct --json var/benchmarks/generation.json

Without --serve it uses the configured LLM endpoint (VERIMED_LLM_BASE_URL / VERIMED_LLM_MODEL).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from generator.answer import PROMPT_STYLES
from generator.llm import LLMSettings, OpenAICompatibleLLM, ServerTokenCounter
from generator.model_files import MODELS, ModelFileError
from generator.serve import served_model
from indexer.hybrid import HybridSettings
from webapp.corpus import engines
from webapp.ops.evaluate_generation import (
    GenerationRun,
    build_index,
    evaluate_generation,
    evaluation_order,
    load_pqal,
    print_table,
)
from webapp.ops.evaluate_retrieval import format_retrieval_table
from webapp.ops.evaluate_verification import format_evidence_table, format_verification_table
from webapp.ops.retrieval_command import retrieval_command
from webapp.ops.verification_commands import evidence_command, verification_command
from webapp.qa.pipeline import default_pipeline_settings


class Command(BaseCommand):
    help = "Measure a pipeline stage on labelled data (prints a table, writes JSON)."

    def add_arguments(self, parser: CommandParser) -> None:
        stages = parser.add_subparsers(dest="stage", required=True)
        generation = stages.add_parser("generation", help="Answers to PubMedQA PQA-L questions over their abstracts.")
        generation.add_argument("--pubmedqa", type=Path, required=True, help="PQA-L ori_pqal.json")
        generation.add_argument(
            "--test-ids", type=Path, help="PQA-L test split ids (default: test_ground_truth.json beside --pubmedqa)"
        )
        generation.add_argument("--limit", type=int, default=50, help="Questions to answer (test split first).")
        generation.add_argument("--json", type=Path, help="Write the results here.")
        generation.add_argument(
            "--serve",
            action="append",
            choices=sorted(MODELS),
            help="Serve this packaged model with llama.cpp for the run (repeat to compare models side by side).",
        )
        generation.add_argument("--prompt-style", choices=PROMPT_STYLES, default=settings.VERIMED_PROMPT_STYLE)
        generation.add_argument("--max-tokens", type=int, default=settings.VERIMED_LLM_MAX_TOKENS)
        generation.add_argument("--context-tokens", type=int, default=settings.VERIMED_LLM_CONTEXT_TOKENS)

        verification = stages.add_parser("verification", help="Claim verification on labelled (claim, document) pairs.")
        verification.add_argument("--claims", type=Path, required=True)
        verification.add_argument("--corpus", type=Path, help="The corpus of the claims (scifact format).")
        verification.add_argument("--format", choices=("scifact", "healthver-csv"), default="scifact")
        verification.add_argument("--json", type=Path, help="Write the results here.")
        verification.add_argument("--model", default=str(settings.VERIMED_VERIFIER_MODEL), help="checkpoint path or id")
        verification.add_argument("--labels", help="The checkpoint's output order, e.g. NO_EVIDENCE,SUPPORT,CONTRADICT")
        verification.add_argument("--evidence-sentences", type=int, default=3)
        verification.add_argument(
            "--peer",
            action="append",
            help="Another checkpoint folder to measure in the same run, e.g. the previous one (repeatable).",
        )
        verification.add_argument(
            "--judge-pairs", type=int, default=60, help="Label-balanced pairs for the LLM judge baseline (0: skip)."
        )
        verification.add_argument(
            "--serve-judge",
            choices=sorted(MODELS),
            help="Serve this packaged model for the judge (default: the configured endpoint).",
        )

        retrieval = stages.add_parser("retrieval", help="Lexical, semantic and hybrid search against bm25s, by qrels.")
        retrieval.add_argument("--corpus", type=Path, nargs="+", required=True, help="JSONL or PubMed XML, gz or not.")
        retrieval.add_argument("--questions", type=Path, required=True, help="JSON lines: id + body|question|claim.")
        retrieval.add_argument("--qrels", type=Path, required=True, help="TSV: query_id, pmid, relevance.")
        retrieval.add_argument("--json", type=Path, help="Write the results here.")
        retrieval.add_argument(
            "--index-dir", type=Path, help="Where to build the throw-away indexes (default: var/eval/retrieval-<name>)."
        )
        retrieval.add_argument(
            "--lexical-weights",
            type=float,
            nargs="+",
            help="Also run weighted fusion with each of these lexical weights (semantic = 1 - it), to tune on held-out "
            "questions.",
        )

        evidence = stages.add_parser("evidence", help="Sentence-level evidence extraction on rationale pairs.")
        evidence.add_argument("--claims", type=Path, required=True)
        evidence.add_argument("--corpus", type=Path, required=True)
        evidence.add_argument("--json", type=Path, help="Write the results here.")
        evidence.add_argument("--late-fusion", type=Path, default=settings.VERIMED_EVIDENCE_MODEL)
        evidence.add_argument(
            "--early-fusion", type=Path, default=settings.VAR_DIR / "models" / "verimed-evidence-early-fusion"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["stage"] == "generation":
            self._generation(options)
        elif options["stage"] == "verification":
            self._write(verification_command(options, self.stdout.write), options["json"], format_verification_table)
        elif options["stage"] == "retrieval":
            self._write(retrieval_command(options, self.stdout.write), options["json"], format_retrieval_table)
        elif options["stage"] == "evidence":
            self._write(evidence_command(options, self.stdout.write), options["json"], format_evidence_table)

    def _write(self, result: dict[str, Any], out: Path | None, table: Callable[[dict[str, Any]], str]) -> None:
        self.stdout.write(table(result))
        if out:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(result, indent=2))
            self.stdout.write(f"wrote {out}")

    def _generation(self, options: dict[str, Any]) -> None:
        path: Path = options["pubmedqa"]
        if not path.exists():
            raise CommandError(f"{path} does not exist")
        items = load_pqal(path)
        ordered = evaluation_order(items, options["test_ids"] or path.with_name("test_ground_truth.json"))
        chosen = ordered[: options["limit"]]
        embedder = engines.embedder()
        self.stdout.write(f"indexing {len(items):,} PQA-L abstracts (reused when already built)…")
        index = build_index(items, settings.VAR_DIR / "eval" / "pubmedqa", embedder)
        summaries: list[dict[str, Any]] = []
        runs: list[GenerationRun] = []
        try:
            for model in options["serve"] or [None]:
                run = self._one_model(model, chosen, index=index, embedder=embedder, options=options)
                runs.append(run)
                summaries.append(run.summary())
        finally:
            index.close()
        print_table(summaries, self.stdout.write)
        if options["json"]:
            out: Path = options["json"]
            out.parent.mkdir(parents=True, exist_ok=True)
            report = {
                "n_questions": len(chosen),
                "corpus": f"{len(items)} PQA-L abstracts ({path.name})",
                "runs": summaries,
                "examples": {run.model: run.examples for run in runs},
            }
            out.write_text(json.dumps(report, indent=2))
            self.stdout.write(f"wrote {out}")

    def _one_model(
        self, model: str | None, chosen: list[Any], *, index: Any, embedder: Any, options: dict[str, Any]
    ) -> GenerationRun:
        serving: AbstractContextManager[str]
        if model:
            self.stdout.write(f"serving {model} with llama.cpp…")
            serving = served_model(model, cache=settings.VERIMED_MODEL_CACHE, n_ctx=options["context_tokens"])
        else:
            serving = nullcontext(settings.VERIMED_LLM_BASE_URL)
        try:
            with serving as base_url:
                llm_settings = LLMSettings(
                    base_url=base_url,
                    model=model or settings.VERIMED_LLM_MODEL,
                    api_key=settings.VERIMED_LLM_API_KEY,
                    timeout_seconds=settings.VERIMED_LLM_TIMEOUT_SECONDS,
                    server_kind="llama.cpp" if model else settings.VERIMED_LLM_SERVER_KIND,
                )

                def progress(done: int, run: GenerationRun) -> None:
                    summary = run.summary()
                    self.stdout.write(
                        f"  {done}/{len(chosen)} cites own {summary['cites_own_abstract_pct']}% "
                        f"ttft p50 {summary['ttft_ms_p50']} ms stance {summary['stance_agreement_pct']}%"
                    )

                return evaluate_generation(
                    chosen,
                    index=index,
                    embedder=embedder,
                    llm=OpenAICompatibleLLM(llm_settings),
                    counter=ServerTokenCounter(llm_settings),
                    # The product's own generation settings, with the options this command takes.
                    generation=default_pipeline_settings().generation.model_copy(
                        update={
                            "prompt_style": options["prompt_style"],
                            "max_tokens": options["max_tokens"],
                            "context_tokens": options["context_tokens"],
                        }
                    ),
                    retrieval=HybridSettings(),
                    progress=progress,
                )
        except ModelFileError as exc:
            raise CommandError(
                f"{exc} (the 0.5B model is an extra: .venv/bin/pip install -e '.[model-qwen05]')"
            ) from exc
