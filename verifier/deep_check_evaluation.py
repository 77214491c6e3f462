"""Measuring the deep check against the plain sentence-level verdict on compound sentences (verifier/compounds.py).

Both read each compound against its document the product's way (`AnswerVerifier`: evidence sentences picked by the
evidence finder, the checkpoint's decision rule). Reported: balanced accuracy of "fully supported or not" for both;
for the deep check also part F1 (whether an unsupported claim points at b, the failing part: it is closer to b than
to A by rapidfuzz's token-set ratio), claims per sentence and seconds per sentence (extraction, both levels and the
claims' own searches, which read the claims file's corpus with plain BM25), and optionally whole six-sentence
answers timed as one. The language model's prompt-reading rate is measured by the same probe every timing benchmark
prints beside its figures (generator/reading_rate.py). `evaluate_deep_check` is what `manage.py evaluate deep-check`
runs.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from rapidfuzz import fuzz
from sklearn.metrics import balanced_accuracy_score, f1_score

from generator.base import LLMSettings
from generator.claims import Claim
from generator.reading_rate import measure_reading_rate
from generator.registry import build_llm
from generator.serve import served_model
from indexer.evaluation import Bm25sBaseline
from indexer.records import ArticleRecord
from verifier.claim_extraction import ClaimExtractor
from verifier.claim_tree import ClaimTree, DeepChecker
from verifier.compounds import Compound, build_compounds, sample_compounds
from verifier.datasets import Document, read_corpus
from verifier.verdicts import SUPPORT, overall_verdict
from verifier.verify import AnswerVerifier, CitedAbstract, SentenceResult

Write = Callable[[str], None]
ANSWER_SENTENCES = 6  # the timing target: a six-sentence answer


def cited_abstract(document: Document) -> CitedAbstract:
    return CitedAbstract(pmid=document.doc_id, title=document.title, abstract=" ".join(document.sentences))


class CorpusSearch:
    """The claims' own searches over the claims file's corpus: plain BM25 (the site runs its hybrid search)."""

    def __init__(self, documents: dict[str, Document]) -> None:
        self.abstracts = {doc_id: cited_abstract(document) for doc_id, document in documents.items()}
        self._bm25 = Bm25sBaseline(
            [ArticleRecord(pmid=a.pmid, title=a.title, abstract=a.abstract) for a in self.abstracts.values()]
        )

    def __call__(self, query: str, *, limit: int) -> list[CitedAbstract]:
        return [self.abstracts[doc_id] for doc_id in self._bm25.search(query, limit=limit)]


def _sentence(compound: Compound) -> Claim:
    return Claim(
        text=f"{compound.text} (PUBMED:{compound.document.doc_id})",
        display_text=compound.text,
        citations=(compound.document.doc_id,),
    )


def points_at_second(tree: ClaimTree, compound: Compound) -> bool:
    """Whether an unsupported claim of the compound's sentence is closer to b than to A (token-set ratio)."""
    return any(
        claim.verdict != SUPPORT
        and fuzz.token_set_ratio(claim.text, compound.second) > fuzz.token_set_ratio(claim.text, compound.first)
        for sentence in tree.sentences
        for claim in sentence.claims
    )


def _percentile(values: Sequence[float], share: float) -> float:
    return round(float(np.percentile(values, share)), 2) if values else 0.0


@dataclass(frozen=True)
class DeepRun:
    trees: list[ClaimTree]
    seconds: list[float]


def run_deep(
    checker: DeepChecker,
    compounds: Sequence[Compound],
    write: Write,
    *,
    each: Callable[[Compound, ClaimTree, float], None] | None = None,
) -> DeepRun:
    """`each` hears every compound as it is done (a long run keeps what it measured if it is cut short)."""
    trees, seconds = [], []
    for number, compound in enumerate(compounds, start=1):
        abstract = cited_abstract(compound.document)
        started = time.perf_counter()
        trees.append(checker.check("", [_sentence(compound)], {abstract.pmid: abstract}, {abstract.pmid}))
        seconds.append(time.perf_counter() - started)
        if each is not None:
            each(compound, trees[-1], seconds[-1])
        if number % 10 == 0 or number == len(compounds):
            write(f"  deep check: {number}/{len(compounds)} compounds, last {seconds[-1]:.1f} s")
    return DeepRun(trees=trees, seconds=seconds)


def time_answers(checker: DeepChecker, compounds: Sequence[Compound], answers: int, write: Write) -> dict[str, Any]:
    """Whole answers of ANSWER_SENTENCES compounds each (each citing its own document), deep-checked as one."""
    times = []
    for start in range(0, min(answers, len(compounds) // ANSWER_SENTENCES) * ANSWER_SENTENCES, ANSWER_SENTENCES):
        group = compounds[start : start + ANSWER_SENTENCES]
        abstracts = {c.document.doc_id: cited_abstract(c.document) for c in group}
        started = time.perf_counter()
        checker.check("", [_sentence(c) for c in group], abstracts, set(abstracts))
        times.append(time.perf_counter() - started)
        write(f"  {ANSWER_SENTENCES}-sentence answer {len(times)}: {times[-1]:.1f} s")
    return {
        "sentences": ANSWER_SENTENCES,
        "n": len(times),
        "seconds_p50": round(statistics.median(times), 2) if times else None,
        "seconds_p95": _percentile(times, 95) if times else None,
    }


def plain_leaning_supported(result: SentenceResult) -> bool:
    """The plain verdict by the decision rule's labels, Unclear or not (what the page shows as Unclear counts by its
    leaning)."""
    return overall_verdict([c.leaning or c.label for c in result.citations]) == SUPPORT


def deep_leaning_supported(tree: ClaimTree) -> bool:
    """The deep verdict by the rule's labels: every claim supported by its cited abstract, Unclear or not."""
    claims = tree.sentences[0].claims
    return bool(claims) and all(
        overall_verdict([e.leaning or e.label for e in claim.evidence if e.cited]) == SUPPORT for claim in claims
    )


def score_compounds(
    compounds: Sequence[Compound], plain_results: Sequence[SentenceResult], deep: DeepRun
) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    """Balanced accuracy of "fully supported" on the verdicts the page shows (Unclear is not supported), and, as
    `balanced_accuracy_leaning`, on the decision rule's labels behind them (the verifier's Unclear threshold hides most
    of its SUPPORT verdicts on these data, for both)."""
    gold = [compound.supported for compound in compounds]
    plain = [result.verdict for result in plain_results]
    deep_verdicts = [tree.sentences[0].verdict for tree in deep.trees]
    pointed = [points_at_second(tree, c) for tree, c in zip(deep.trees, compounds, strict=True)]
    claims = [len(tree.sentences[0].claims) for tree in deep.trees]
    plain_scores = {
        "balanced_accuracy": _balanced([v == SUPPORT for v in plain], gold),
        "balanced_accuracy_leaning": _balanced([plain_leaning_supported(r) for r in plain_results], gold),
    }
    deep_scores = {
        "balanced_accuracy": _balanced([v == SUPPORT for v in deep_verdicts], gold),
        "balanced_accuracy_leaning": _balanced([deep_leaning_supported(tree) for tree in deep.trees], gold),
        # The failing part found: positives are the compounds whose b fails.
        "part_f1": round(float(f1_score([not g for g in gold], pointed, zero_division=0)), 4),
        "claims_per_sentence": round(statistics.mean(claims), 3) if claims else 0.0,
        "seconds_per_sentence_p50": round(statistics.median(deep.seconds), 2) if deep.seconds else 0.0,
        "seconds_per_sentence_p95": _percentile(deep.seconds, 95),
        "sentences_split_by_the_model": sum(tree.sentences[0].from_model for tree in deep.trees),
    }
    items = [
        item_record(c, verdict, tree, seconds)
        for c, verdict, tree, seconds in zip(compounds, plain, deep.trees, deep.seconds, strict=True)
    ]
    return plain_scores, deep_scores, items


def item_record(compound: Compound, plain: str, tree: ClaimTree, seconds: float) -> dict[str, Any]:
    return {
        "document": compound.document.doc_id,
        "claims": [compound.first_id, compound.second_id],
        "text": compound.text,
        "gold": "SUPPORT" if compound.supported else f"not supported ({compound.second_label})",
        "plain": plain,
        "deep": tree.sentences[0].verdict,
        "deep_claims": [[claim.text, claim.verdict] for claim in tree.sentences[0].claims],
        "note": tree.sentences[0].note,
        "seconds": round(seconds, 2),
    }


def _balanced(predicted: Sequence[bool], gold: Sequence[bool]) -> float:
    return round(float(balanced_accuracy_score(gold, predicted)), 4) if gold else 0.0


def evaluate_deep_check(
    claims: Path,
    *,
    corpus: Path,
    limit: int | None,
    verifier: AnswerVerifier,
    endpoint: LLMSettings,
    serve: str | None,
    model_cache: Path,
    timed_answers: int,
    write: Write,
    items_path: Path | None = None,
) -> dict[str, Any]:
    """Plain against deep on the compounds of `claims` (a seeded half-and-half sample of `limit`), the language
    model reached at `endpoint`, or the packaged model `serve` served with llama.cpp for the run. Each compound's
    result is also appended to `items_path` (JSON lines) as soon as it is measured."""
    compounds = build_compounds(claims, corpus)
    sample = sample_compounds(compounds, limit)
    if items_path is not None:
        items_path.parent.mkdir(parents=True, exist_ok=True)
        items_path.write_text("")
    write(f"{len(compounds)} compounds built; {len(sample)} sampled ({sum(c.supported for c in sample)} supported)")
    write("plain verdicts (one batch)…")
    plain_results = verifier.verify([_sentence(c) for c in sample], *_abstracts(sample))
    write("indexing the corpus for the claims' own searches (BM25)…")
    search = CorpusSearch(read_corpus(corpus))
    serving: AbstractContextManager[str | None] = nullcontext(None)
    if serve:
        write(f"serving {serve} with llama.cpp…")
        serving = served_model(serve, cache=model_cache, n_ctx=4096)
    with serving as served_url:
        settings = (
            replace(endpoint, base_url=served_url, model=serve, server_kind="llama.cpp")
            if served_url and serve
            else endpoint
        )
        rate = None if settings.server_kind == "fake" else measure_reading_rate(settings).tokens_per_s
        write(f"prompt reading rate: {rate} tokens/s")
        extractor = ClaimExtractor(build_llm(settings))
        checker = DeepChecker(extractor, verifier, search)
        if sample:  # the prompt's constant prefix read once, as a warmed server holds it; not timed
            checker.check("", [_sentence(sample[0])], *_abstracts(sample[:1]))
        verdicts = {id(c): result.verdict for c, result in zip(sample, plain_results, strict=True)}

        def keep(compound: Compound, tree: ClaimTree, seconds: float) -> None:
            if items_path is not None:
                with items_path.open("a") as out:
                    out.write(json.dumps(item_record(compound, verdicts[id(compound)], tree, seconds)) + "\n")

        deep = run_deep(checker, sample, write, each=keep)
        answers = time_answers(checker, sample, timed_answers, write) if timed_answers else None
    plain_scores, deep_scores, items = score_compounds(sample, plain_results, deep)
    result: dict[str, Any] = {
        "claims": str(claims),
        "corpus": str(corpus),
        "compounds": len(compounds),
        "n": len(sample),
        "supported": sum(c.supported for c in sample),
        "model": extractor.model_id,
        "verifier": verifier.classifier.model_id,
        "evidence": verifier.evidence.model_id,
        "plain": plain_scores,
        "deep": deep_scores,
        "llm_prompt_tokens_per_s": rate,
        "items": items,
    }
    if answers is not None:
        result["answers"] = answers
    return result


def _abstracts(compounds: Sequence[Compound]) -> tuple[dict[str, CitedAbstract], set[str]]:
    abstracts = {c.document.doc_id: cited_abstract(c.document) for c in compounds}
    return abstracts, set(abstracts)


def format_deep_check_table(result: dict[str, Any]) -> str:
    deep = result["deep"]
    lines = [
        f"{result['n']} compounds ({result['supported']} supported) of {result['compounds']}; model {result['model']}, "
        f"prompt reading {result['llm_prompt_tokens_per_s']} tokens/s",
        f"{'run':<8} {'bal.acc':>8} {'leaning':>8} {'part F1':>8} {'claims/s.':>9} {'s/sent p50':>10} {'p95':>6}",
        f"{'plain':<8} {result['plain']['balanced_accuracy']:>8.3f} "
        f"{result['plain']['balanced_accuracy_leaning']:>8.3f} {'-':>8} {'1':>9} {'-':>10} {'-':>6}",
        f"{'deep':<8} {deep['balanced_accuracy']:>8.3f} {deep['balanced_accuracy_leaning']:>8.3f} "
        f"{deep['part_f1']:>8.3f} {deep['claims_per_sentence']:>9.2f} "
        f"{deep['seconds_per_sentence_p50']:>10.2f} {deep['seconds_per_sentence_p95']:>6.2f}",
    ]
    if answers := result.get("answers"):
        lines.append(f"{answers['sentences']}-sentence answers: n={answers['n']}, p50 {answers['seconds_p50']} s")
    return "\n".join(lines)
