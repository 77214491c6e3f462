"""Measure generation on PubMedQA PQA-L: citations, grounding in the question's own abstract, speed and stance.

The corpus is the PQA-L abstracts themselves (1,000, each question's own abstract among them), indexed into a
throw-away tantivy + qdrant-edge pair under `var/eval/`. Each question goes through the product's own path:
hybrid retrieval of 10 abstracts, focusing, packing to the model's window with its tokenizer, streamed
generation, citation normalisation and repair. Its stance (yes / no / maybe) is then decided by the same LLM in a
separate short call and compared with PQA-L's `final_decision`. `evaluate_pubmedqa` is the whole run
`manage.py evaluate generation` makes, one model after another over the same questions.
"""

from __future__ import annotations

import json
import random
import statistics
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from generator.answer import ContextAbstract
from generator.answer_model_stance import STANCES, llm_stance
from generator.base import LLM, LLMSettings, TokenCounter
from generator.citations import NormalizedAnswer
from generator.claims import claims_from_answer
from generator.context_focus import focused_context, packed_context
from generator.generate import generate_answer
from generator.generation_settings import GenerationSettings
from generator.packing import PackedContext
from generator.reading_rate import ReadingRate, measure_reading_rate
from generator.registry import build_llm, build_token_counter
from generator.serve import served_model
from indexer.base import Embedder, FusedHit
from indexer.evaluation_index import EvaluationIndex, build_evaluation_index
from indexer.hybrid import HybridSettings, hybrid_search
from indexer.records import ArticleRecord

Write = Callable[[str], None]


@dataclass(frozen=True)
class PubMedQAItem:
    pmid: str
    question: str
    abstract: str
    final_decision: str


def load_pqal(path: Path) -> list[PubMedQAItem]:
    """PQA-L as items; the abstract is its context paragraphs joined (PQA-L keeps no title)."""
    raw = json.loads(path.read_text())
    return [
        PubMedQAItem(
            pmid=pmid,
            question=entry["QUESTION"],
            abstract=" ".join(entry["CONTEXTS"]),
            final_decision=entry["final_decision"],
        )
        for pmid, entry in raw.items()
    ]


def evaluation_order(items: Sequence[PubMedQAItem], test_ids_path: Path | None, *, seed: int = 0) -> list[PubMedQAItem]:
    """The official test split first, in a seeded shuffle, then the rest: a --limit run is a test-split sample.

    The shuffle matters: the test ids file is grouped by answer (its first 50 ids are all "yes"), so taking them in
    file order would measure one kind of question only.
    """
    shuffled = list(items)
    random.Random(seed).shuffle(shuffled)
    if test_ids_path is None or not test_ids_path.exists():
        return shuffled
    test_ids = set(json.loads(test_ids_path.read_text()))
    return [item for item in shuffled if item.pmid in test_ids] + [
        item for item in shuffled if item.pmid not in test_ids
    ]


def build_index(items: Sequence[PubMedQAItem], directory: Path, embedder: Embedder) -> EvaluationIndex:
    """Index the abstracts, or reuse the index a previous run built for the same abstracts."""
    records = [ArticleRecord(pmid=item.pmid, title="", abstract=item.abstract) for item in items]
    return build_evaluation_index(records, directory, embedder)


@dataclass
class GenerationRun:
    model: str
    prompt_style: str
    abstracts_in_prompt: int = 0
    sentences_per_abstract: int = 0
    lead_abstract_sentences: int = 0
    probe_tokens_per_s: float | None = None  # the server's prompt-reading rate (generator.reading_rate)
    answers: int = 0
    failed: int = 0
    own_retrieved: int = 0
    with_citation: int = 0
    cites_own: int = 0
    citations: list[int] = field(default_factory=list)
    sentences: int = 0
    cited_sentences: int = 0
    hallucinated_raw: int = 0
    hallucinated_final: int = 0
    repaired: int = 0
    cannot_answer: int = 0
    dropped_abstracts: int = 0
    prompt_tokens: list[int] = field(default_factory=list)
    ttft_ms: list[float] = field(default_factory=list)
    tokens_per_s: list[float] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    stance_agree: int = 0
    stance_counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STANCES, 0))
    examples: list[dict[str, Any]] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        n = max(self.answers, 1)
        sentences = max(self.sentences, 1)
        return {
            "model": self.model,
            "prompt_style": self.prompt_style,
            "abstracts_in_prompt": self.abstracts_in_prompt,
            "sentences_per_abstract": self.sentences_per_abstract,
            "lead_abstract_sentences": self.lead_abstract_sentences,
            "answers": self.answers,
            "failed": self.failed,
            "own_abstract_retrieved_pct": round(100 * self.own_retrieved / n, 1),
            "with_citation_pct": round(100 * self.with_citation / n, 1),
            "cites_own_abstract_pct": round(100 * self.cites_own / n, 1),
            "mean_citations": round(statistics.fmean(self.citations), 2) if self.citations else 0.0,
            "sentence_citation_coverage_pct": round(100 * self.cited_sentences / sentences, 1),
            "sentences_per_answer": round(self.sentences / n, 2),
            "cited_sentences_per_answer": round(self.cited_sentences / n, 2),
            "hallucinated_ids_raw": self.hallucinated_raw,
            "repaired_ids": self.repaired,
            "hallucinated_ids_final": self.hallucinated_final,
            "cannot_answer": self.cannot_answer,
            "dropped_abstracts": self.dropped_abstracts,
            "prompt_tokens_p50": round(statistics.median(self.prompt_tokens)) if self.prompt_tokens else None,
            "probe_prompt_tokens_per_s": self.probe_tokens_per_s,
            "ttft_ms_p50": round(statistics.median(self.ttft_ms), 1) if self.ttft_ms else None,
            "tokens_per_s": round(statistics.median(self.tokens_per_s), 1) if self.tokens_per_s else None,
            "seconds_per_answer_p50": round(statistics.median(self.seconds), 1) if self.seconds else None,
            "stance_agreement_pct": round(100 * self.stance_agree / n, 1),
            "stance_counts": self.stance_counts,
            "stance_method": "the same LLM, a separate call: question + final answer -> yes / no / maybe",
        }


def evaluate_generation(
    items: Sequence[PubMedQAItem],
    *,
    index: EvaluationIndex,
    embedder: Embedder,
    llm: LLM,
    counter: TokenCounter,
    generation: GenerationSettings,
    retrieval: HybridSettings,
    progress: Callable[[int, GenerationRun], None] = lambda done, run: None,
) -> GenerationRun:
    """Each question through the product's own steps: retrieval, focusing, packing, generation (as services do)."""
    run = GenerationRun(
        model=llm.model_id,
        prompt_style=generation.prompt_style,
        abstracts_in_prompt=generation.abstracts_in_prompt,
        sentences_per_abstract=generation.sentences_per_abstract,
        lead_abstract_sentences=generation.lead_abstract_sentences,
    )
    for done, item in enumerate(items, start=1):
        hits = index_search(item.question, index=index, embedder=embedder, retrieval=retrieval)
        packed = answer_prompt(
            item.question, hits, index=index, embedder=embedder, counter=counter, generation=generation
        )
        given = [abstract.pmid for abstract in packed.abstracts]
        try:
            answer = generate_answer(llm, packed.prompt, generation.sampling(), given_pmids=given)
        except Exception as exc:  # one failed answer is counted, not fatal to the run
            run.failed += 1
            run.examples.append({"pmid": item.pmid, "error": str(exc)})
            continue
        _score(run, item, given, answer.normalized, answer.cannot_answer, packed.dropped)
        run.prompt_tokens.append(packed.prompt_tokens)
        if answer.ttft_ms is not None:
            run.ttft_ms.append(answer.ttft_ms)
        run.tokens_per_s.append(answer.tokens_per_s)
        run.seconds.append(answer.seconds)
        stance = llm_stance(llm, item.question, answer.text)
        run.stance_counts[stance] += 1
        run.stance_agree += stance == item.final_decision
        if len(run.examples) < 5:
            run.examples.append(
                {"pmid": item.pmid, "question": item.question, "answer_raw": answer.raw_text, "answer": answer.text}
            )
        progress(done, run)
    return run


def index_search(
    question: str, *, index: EvaluationIndex, embedder: Embedder, retrieval: HybridSettings
) -> list[FusedHit]:
    """The product's hybrid search over an evaluation index, query expansion reading the index's own abstracts."""
    return hybrid_search(
        question,
        lexical=index.lexical,
        vectors=index.vectors,
        embedder=embedder,
        settings=retrieval,
        abstracts=lambda pmids: {
            pmid: (index.articles[pmid].title, index.articles[pmid].abstract)
            for pmid in pmids
            if pmid in index.articles
        },
    )


def answer_prompt(
    question: str,
    hits: Sequence[FusedHit],
    *,
    index: EvaluationIndex,
    embedder: Embedder,
    counter: TokenCounter,
    generation: GenerationSettings,
    bottom_line: str | None = None,
) -> PackedContext:
    """The prompt the product would send for `question` and these hits: focused, then packed to the model's window;
    `bottom_line` the yes/no question's bottom line the product gives the model first (`bottom_line_first`)."""
    context = focused_context(
        question,
        [
            ContextAbstract(
                pmid=hit.pmid, title=index.articles[hit.pmid].title, abstract=index.articles[hit.pmid].abstract
            )
            for hit in hits
        ],
        embedder=embedder,
        options=generation,
    )
    return packed_context(question, context, generation, counter=counter, bottom_line=bottom_line)


def _score(
    run: GenerationRun,
    item: PubMedQAItem,
    given: list[str],
    normalized: NormalizedAnswer,
    cannot_answer: bool,
    dropped: Sequence[str],
) -> None:
    run.answers += 1
    run.own_retrieved += item.pmid in given
    run.cannot_answer += cannot_answer
    run.dropped_abstracts += len(dropped)
    given_set = set(given)
    cited = {citation.pmid for citation in normalized.citations if citation.pmid}
    run.with_citation += bool(cited)
    run.cites_own += item.pmid in cited
    run.citations.append(len(cited))
    # Raw: every written reference whose id is not a given PMID (index forms like [2] are references too).
    run.hallucinated_raw += sum(1 for citation in normalized.citations if citation.how in ("repaired", "unmatched"))
    run.repaired += len(normalized.repaired)
    # Final: links the page would draw to something the model was not given; must be 0 by construction.
    run.hallucinated_final += sum(1 for pmid in cited if pmid not in given_set)
    claims = claims_from_answer(normalized.text)
    run.sentences += len(claims)
    run.cited_sentences += sum(1 for claim in claims if claim.citations)


@contextmanager
def served_llm(
    model: str | None, *, endpoint: LLMSettings, model_cache: Path, n_ctx: int, write: Write
) -> Iterator[tuple[LLMSettings, ReadingRate | None]]:
    """For the block: `model` served with llama.cpp (None: `endpoint` as configured), its settings, and the server's
    prompt-reading rate (None for the fake server), printed because the same prompt takes five times longer on some
    of our machines than others and a timing means nothing without it."""
    serving: AbstractContextManager[str]
    if model:
        write(f"serving {model} with llama.cpp…")
        serving = served_model(model, cache=model_cache, n_ctx=n_ctx)
    else:
        serving = nullcontext(endpoint.base_url)
    with serving as base_url:
        settings = replace(
            endpoint,
            base_url=base_url,
            model=model or endpoint.model,
            server_kind="llama.cpp" if model else endpoint.server_kind,
        )
        rate = None if settings.server_kind == "fake" else measure_reading_rate(settings)
        if rate:
            write(f"  the server reads prompts at {rate.tokens_per_s} tokens/s (probe of {rate.prompt_tokens} tokens)")
        yield settings, rate


def evaluate_model(
    model: str | None,
    items: Sequence[PubMedQAItem],
    *,
    endpoint: LLMSettings,
    model_cache: Path,
    index: EvaluationIndex,
    embedder: Embedder,
    generation: GenerationSettings,
    retrieval: HybridSettings,
    write: Write,
) -> GenerationRun:
    """One model's run: `model` names a packaged model served with llama.cpp for the run; None uses `endpoint`."""
    with served_llm(
        model, endpoint=endpoint, model_cache=model_cache, n_ctx=generation.context_tokens, write=write
    ) as (
        llm_settings,
        rate,
    ):

        def progress(done: int, run: GenerationRun) -> None:
            summary = run.summary()
            write(
                f"  {done}/{len(items)} cites own {summary['cites_own_abstract_pct']}% "
                f"ttft p50 {summary['ttft_ms_p50']} ms stance {summary['stance_agreement_pct']}%"
            )

        run = evaluate_generation(
            items,
            index=index,
            embedder=embedder,
            llm=build_llm(llm_settings),
            counter=build_token_counter(llm_settings),
            generation=generation,
            retrieval=retrieval,
            progress=progress,
        )
        return replace(run, probe_tokens_per_s=rate.tokens_per_s if rate else None)


def evaluate_pubmedqa(
    pqal_path: Path,
    *,
    test_ids_path: Path | None,
    limit: int,
    models: Sequence[str | None],
    index_dir: Path,
    embedder: Embedder,
    endpoint: LLMSettings,
    model_cache: Path,
    generation: GenerationSettings,
    retrieval: HybridSettings,
    write: Write,
) -> dict[str, Any]:
    """The first `limit` questions (test split first) answered by each model in turn over the 1,000 PQA-L abstracts;
    `test_ids_path` defaults to `test_ground_truth.json` beside the PQA-L file."""
    items = load_pqal(pqal_path)
    chosen = evaluation_order(items, test_ids_path or pqal_path.with_name("test_ground_truth.json"))[:limit]
    write(f"indexing {len(items):,} PQA-L abstracts (reused when already built)…")
    index = build_index(items, index_dir, embedder)
    runs: list[GenerationRun] = []
    try:
        for model in models:
            runs.append(
                evaluate_model(
                    model,
                    chosen,
                    endpoint=endpoint,
                    model_cache=model_cache,
                    index=index,
                    embedder=embedder,
                    generation=generation,
                    retrieval=retrieval,
                    write=write,
                )
            )
    finally:
        index.close()
    return {
        "n_questions": len(chosen),
        "corpus": f"{len(items)} PQA-L abstracts ({pqal_path.name})",
        "runs": [run.summary() for run in runs],
        "examples": {run.model: run.examples for run in runs},
    }


def format_generation_table(report: dict[str, Any]) -> str:
    summaries = report["runs"]
    keys = [key for key in summaries[0] if key not in ("stance_counts", "stance_method", "model")]
    lines = [f"{'metric':34}" + "".join(f"{summary['model'][:28]:>30}" for summary in summaries)]
    for key in keys:
        lines.append(f"{key:34}" + "".join(f"{summary[key]!s:>30}" for summary in summaries))
    return "\n".join(lines)
