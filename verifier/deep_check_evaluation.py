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
from sklearn.metrics import f1_score

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
from verifier.gold_split import gold_split_scores, leans_to_support
from verifier.metrics import balanced_accuracy
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


def deep_leaning_supported(tree: ClaimTree) -> bool:
    """The deep verdict by the rule's labels: every claim supported by its cited abstract, Unclear or not."""
    claims = tree.sentences[0].claims
    return bool(claims) and all(
        overall_verdict([e.leaning or e.label for e in claim.evidence if e.cited]) == SUPPORT for claim in claims
    )


def plain_scores(compounds: Sequence[Compound], plain_results: Sequence[SentenceResult]) -> dict[str, Any]:
    """Balanced accuracy of "fully supported" on the verdicts the page shows (Unclear is not supported), and, as
    `balanced_accuracy_leaning`, on the decision rule's labels behind them (the verifier's Unclear threshold hides most
    of its SUPPORT verdicts on these data)."""
    gold = [compound.supported for compound in compounds]
    return {
        "balanced_accuracy": balanced_accuracy([r.verdict == SUPPORT for r in plain_results], gold),
        "balanced_accuracy_leaning": balanced_accuracy([leans_to_support(r) for r in plain_results], gold),
    }


def deep_scores(compounds: Sequence[Compound], deep: DeepRun) -> dict[str, Any]:
    """The same two balanced accuracies for the deep check's sentence verdicts, and the issue's other figures."""
    gold = [compound.supported for compound in compounds]
    pointed = [points_at_second(tree, c) for tree, c in zip(deep.trees, compounds, strict=True)]
    claims = [len(tree.sentences[0].claims) for tree in deep.trees]
    return {
        "balanced_accuracy": balanced_accuracy([tree.sentences[0].verdict == SUPPORT for tree in deep.trees], gold),
        "balanced_accuracy_leaning": balanced_accuracy([deep_leaning_supported(tree) for tree in deep.trees], gold),
        # The failing part found: positives are the compounds whose b fails.
        "part_f1": round(float(f1_score([not g for g in gold], pointed, zero_division=0)), 4),
        "claims_per_sentence": round(statistics.mean(claims), 3) if claims else 0.0,
        "seconds_per_sentence_p50": round(statistics.median(deep.seconds), 2) if deep.seconds else 0.0,
        "seconds_per_sentence_p95": _percentile(deep.seconds, 95),
        "sentences_split_by_the_model": sum(tree.sentences[0].from_model for tree in deep.trees),
    }


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
    with_model: bool = True,
) -> dict[str, Any]:
    """Plain against deep on the compounds of `claims` (a seeded half-and-half sample of `limit`), the language
    model reached at `endpoint`, or the packaged model `serve` served with llama.cpp for the run. Each compound's
    result is also appended to `items_path` (JSON lines) as soon as it is measured. The gold split's figures
    (verifier/gold_split.py) come with every run; `with_model` False measures only those and the plain verdict."""
    compounds = build_compounds(claims, corpus)
    sample = sample_compounds(compounds, limit)
    write(f"{len(compounds)} compounds built; {len(sample)} sampled ({sum(c.supported for c in sample)} supported)")
    write("plain verdicts (one batch)…")
    abstracts, given = _abstracts(sample)
    plain_results = verifier.verify([_sentence(c) for c in sample], abstracts, given)
    write("the gold split's claims (one batch)…")
    plain_ceiling, gold_split = gold_split_scores(sample, plain_results, verifier, abstracts)
    result: dict[str, Any] = {
        "claims": str(claims),
        "corpus": str(corpus),
        "compounds": len(compounds),
        "n": len(sample),
        "supported": sum(c.supported for c in sample),
        "model": None,
        "verifier": verifier.classifier.model_id,
        "evidence": verifier.evidence.model_id,
        "plain": {**plain_scores(sample, plain_results), **plain_ceiling},
        "gold_split": gold_split,
        "deep": None,
        "llm_prompt_tokens_per_s": None,
    }
    if not with_model:
        return result
    if items_path is not None:
        items_path.parent.mkdir(parents=True, exist_ok=True)
        items_path.write_text("")
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
        verdicts = {id(c): plain.verdict for c, plain in zip(sample, plain_results, strict=True)}

        def keep(compound: Compound, tree: ClaimTree, seconds: float) -> None:
            if items_path is not None:
                with items_path.open("a") as out:
                    out.write(json.dumps(item_record(compound, verdicts[id(compound)], tree, seconds)) + "\n")

        deep = run_deep(checker, sample, write, each=keep)
        answers = time_answers(checker, sample, timed_answers, write) if timed_answers else None
    result.update(
        model=extractor.model_id,
        deep=deep_scores(sample, deep),
        llm_prompt_tokens_per_s=rate,
        items=[
            item_record(c, plain.verdict, tree, seconds)
            for c, plain, tree, seconds in zip(sample, plain_results, deep.trees, deep.seconds, strict=True)
        ],
    )
    if answers is not None:
        result["answers"] = answers
    return result


def _abstracts(compounds: Sequence[Compound]) -> tuple[dict[str, CitedAbstract], set[str]]:
    abstracts = {c.document.doc_id: cited_abstract(c.document) for c in compounds}
    return abstracts, set(abstracts)


def _cell(value: float | None, width: int, digits: int = 3) -> str:
    return f"{value:>{width}.{digits}f}" if value is not None else f"{'-':>{width}}"


def format_deep_check_table(result: dict[str, Any]) -> str:
    """One row per reading: plain, the gold split (and its b alone), the deep check when the model ran. "best t" is
    the balanced accuracy of the best threshold on P(SUPPORT) (the weakest claim's for a split), an upper bound."""
    plain, split, deep = result["plain"], result["gold_split"], result["deep"]
    rate = result["llm_prompt_tokens_per_s"]
    lines = [
        f"{result['n']} compounds ({result['supported']} supported) of {result['compounds']}; "
        + (f"model {result['model']}, prompt reading {rate} tokens/s" if deep is not None else "without the model"),
        f"{'run':<16} {'bal.acc':>8} {'leaning':>8} {'AUC':>6} {'best t':>7} {'part F1':>8} {'claims':>7} "
        f"{'s p50':>6} {'s p95':>6}",
    ]

    def row(name: str, scores: dict[str, Any], rest: str = f"{'-':>8} {'-':>7} {'-':>6} {'-':>6}") -> str:
        return (
            f"{name:<16} {_cell(scores.get('balanced_accuracy'), 8)} "
            f"{_cell(scores.get('balanced_accuracy_leaning'), 8)} {_cell(scores.get('auc'), 6)} "
            f"{_cell(scores.get('best_balanced_accuracy'), 7)} {rest}"
        )

    lines.append(row("plain", plain))
    lines.append(row("gold split", split))
    lines.append(row("  its b alone", split["second_claim"]))
    if deep is not None:
        lines.append(
            row(
                "deep",
                deep,
                f"{deep['part_f1']:>8.3f} {deep['claims_per_sentence']:>7.2f} "
                f"{deep['seconds_per_sentence_p50']:>6.2f} {deep['seconds_per_sentence_p95']:>6.2f}",
            )
        )
    if answers := result.get("answers"):
        lines.append(f"{answers['sentences']}-sentence answers: n={answers['n']}, p50 {answers['seconds_p50']} s")
    return "\n".join(lines)
