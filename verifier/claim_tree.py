"""The deep check (Iterative Tree Analysis, Huang et al. 2025, on VeriMed's own models): an answer's cited sentences
become a tree of claims, each claim is judged against the abstracts its sentence cites, and a claim those abstracts do
not settle gets a focused search of its own; verdicts are then consolidated bottom-up.

    sentence ── claim ── the cited abstracts (level 1)
                      └─ other abstracts a search with the claim finds, when level 1 did not settle it (level 2)

Each level is judged in one batch by the product's verifier (`AnswerVerifier`: the evidence finder picks each
abstract's sentences, the classifier reads them, its decision rule shows UNCLEAR below the checkpoint's threshold).
A claim is settled when a cited abstract supports or contradicts it with a shown (confident) verdict; NO_EVIDENCE,
UNCLEAR and NO_REFERENCE are not settled, since the claim may still be true or false in a paper the answer did not
cite. Bottom-up, a sentence is SUPPORT only when every claim is supported by an abstract it cites: a claim supported
only by another paper is SUPPORT_ELSEWHERE, a citation problem rather than a falsehood, and leaves its sentence short
of SUPPORT. A stop requested between levels ends the check with DeepCheckStoppedError.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from generator.claims import Claim
from verifier.claim_extraction import ClaimExtractor, SentenceClaims, SentenceToSplit
from verifier.verdicts import CONTRADICT, NO_EVIDENCE, NO_REFERENCE, SUPPORT, UNCITED, UNCLEAR
from verifier.verify import AnswerVerifier, CitationResult, CitedAbstract, SentenceResult

SUPPORT_ELSEWHERE = "SUPPORT_ELSEWHERE"  # supported only by an abstract the sentence does not cite
CONTRADICT_ELSEWHERE = "CONTRADICT_ELSEWHERE"  # contradicted only by an abstract the sentence does not cite
PARTIAL = "PARTIAL"  # a sentence with some claims supported and others not: the unsupported part no longer hides
SETTLED = (SUPPORT, CONTRADICT)
# Abstracts a claim's own search reads beyond those its sentence cites: each costs one verifier pair, and a claim
# either finds its paper among the first few or its words are not what the literature says.
REQUERY_ABSTRACTS = 3


class ClaimSearch(Protocol):
    def __call__(self, query: str, *, limit: int) -> Sequence[CitedAbstract]:
        """Abstracts for `query`, best first, at most `limit` (the question pipeline's hybrid search, in the site)."""


class DeepCheckStoppedError(Exception):
    """A stop was requested: the check ended between two levels."""


Progress = Callable[[str, int], None]  # a stage's name and the percentage done


@dataclass(frozen=True)
class EvidenceNode:
    """One abstract's verdict on one claim, with the sentences it rests on."""

    pmid: str
    title: str
    cited: bool  # cited by the claim's sentence; False: found by the claim's own search
    label: str  # as the page shows it: SUPPORT, CONTRADICT, NO_EVIDENCE, UNCLEAR or NO_REFERENCE
    confidence: float | None
    leaning: str | None
    evidence_spans: tuple[tuple[int, int], ...]  # character offsets into the abstract, as the verify stage stores
    evidence_text: tuple[str, ...]


@dataclass(frozen=True)
class ClaimNode:
    text: str
    verdict: str  # a cited verdict, SUPPORT_ELSEWHERE or CONTRADICT_ELSEWHERE
    confidence: float | None
    requeried: bool  # its sentence's abstracts did not settle it, so it was searched for
    evidence: tuple[EvidenceNode, ...]  # the cited abstracts first, then those its search found


@dataclass(frozen=True)
class SentenceNode:
    position: int
    text: str
    citations: tuple[str, ...]
    verdict: str  # UNCITED for a sentence that cites nothing (it has no claims: nothing to check it against)
    from_model: bool  # its claims are the model's; False: the sentence is its own one claim
    note: str  # why the model's claims were not used
    claims: tuple[ClaimNode, ...]


@dataclass(frozen=True)
class ClaimTree:
    sentences: tuple[SentenceNode, ...]
    extraction_raw: str
    max_tokens: int  # the extraction's token budget
    extractor: str
    timings_ms: dict[str, float]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def claim_verdict(cited: str, elsewhere: Sequence[str]) -> str:
    """A claim's verdict: its cited abstracts' when they settle it, else what another paper says, else theirs."""
    if cited in SETTLED:
        return cited
    if SUPPORT in elsewhere:
        return SUPPORT_ELSEWHERE
    if CONTRADICT in elsewhere:
        return CONTRADICT_ELSEWHERE
    return cited


def sentence_verdict(claims: Sequence[str]) -> str:
    """Bottom-up: any contradiction by a cited abstract wins (a reader must see it); SUPPORT needs every claim
    supported by a cited abstract; SUPPORT_ELSEWHERE when the rest are supported only by other papers; PARTIAL when
    some claims are supported and some not."""
    seen = set(claims)
    if not seen:
        return UNCITED
    supported = {SUPPORT, SUPPORT_ELSEWHERE}
    if CONTRADICT in seen:
        return CONTRADICT
    if seen == {SUPPORT}:
        return SUPPORT
    if seen <= supported:
        return SUPPORT_ELSEWHERE
    if seen & supported:
        return PARTIAL
    for only in (UNCLEAR, NO_REFERENCE):
        if seen == {only}:
            return only
    return CONTRADICT_ELSEWHERE if CONTRADICT_ELSEWHERE in seen else NO_EVIDENCE


def _evidence(result: CitationResult, abstract: CitedAbstract | None, *, cited: bool) -> EvidenceNode:
    text = abstract.abstract if abstract is not None else ""
    return EvidenceNode(
        pmid=result.pmid,
        title=abstract.title if abstract is not None else "",
        cited=cited,
        label=result.label,
        confidence=result.confidence,
        leaning=result.leaning if result.label == UNCLEAR else None,
        evidence_spans=result.evidence_spans,
        evidence_text=tuple(text[start:end] for start, end in result.evidence_spans),
    )


@dataclass(frozen=True)
class _Leaf:
    position: int  # the sentence's
    text: str
    citations: tuple[str, ...]


class DeepChecker:
    def __init__(
        self,
        extractor: ClaimExtractor,
        verifier: AnswerVerifier,
        search: ClaimSearch | None = None,
        *,
        requery_abstracts: int = REQUERY_ABSTRACTS,
    ) -> None:
        self.extractor = extractor
        self.verifier = verifier
        self.search = search
        self.requery_abstracts = requery_abstracts

    def check(
        self,
        question: str,
        sentences: Sequence[Claim],
        abstracts: Mapping[str, CitedAbstract],
        given: set[str],
        *,
        should_stop: Callable[[], bool] = lambda: False,
        progress: Progress | None = None,
    ) -> ClaimTree:
        """The tree of an answer's `sentences` (as the verify stage splits them), judged against `abstracts` (the
        cited ones; only those in `given`, the ones the model was shown, count as cited)."""
        report = progress or (lambda stage, percent: None)
        timings: dict[str, float] = {}
        started = time.perf_counter()
        report("extracting", 5)
        extraction = self.extractor.extract(
            question,
            [SentenceToSplit(index, s.display_text, cited=bool(s.citations)) for index, s in enumerate(sentences)],
        )
        timings["extraction"] = _ms_since(started)
        self._stop_if_asked(should_stop)
        leaves = [
            _Leaf(split.position, text, sentences[split.position].citations)
            for split in extraction.sentences
            for text in split.claims
        ]
        report("judging", 60)
        started = time.perf_counter()
        cited = self.verifier.verify(
            [Claim(text=leaf.text, display_text=leaf.text, citations=leaf.citations) for leaf in leaves],
            abstracts,
            given,
        )
        timings["judging"] = _ms_since(started)
        self._stop_if_asked(should_stop)
        report("searching", 75)
        started = time.perf_counter()
        elsewhere, found = self._requery(leaves, cited)
        timings["requery"] = _ms_since(started)
        report("done", 100)
        nodes = self._claim_nodes(leaves, cited, elsewhere, {**found, **abstracts})
        splits = {split.position: split for split in extraction.sentences}
        tree = tuple(
            self._sentence_node(index, sentence, splits.get(index), [n for leaf, n in nodes if leaf.position == index])
            for index, sentence in enumerate(sentences)
        )
        return ClaimTree(
            sentences=tree,
            extraction_raw=extraction.raw,
            max_tokens=extraction.max_tokens,
            extractor=extraction.model_id,
            timings_ms=timings,
        )

    @property
    def _searching(self) -> bool:
        return self.search is not None and self.requery_abstracts > 0

    def _stop_if_asked(self, should_stop: Callable[[], bool]) -> None:
        if should_stop():
            raise DeepCheckStoppedError("the deep check was stopped")

    def _requery(
        self, leaves: Sequence[_Leaf], cited: Sequence[SentenceResult]
    ) -> tuple[dict[int, SentenceResult], dict[str, CitedAbstract]]:
        """Level 2: a search per unsettled claim, all its new abstracts judged in one batch; by leaf index."""
        if self.search is None or not self._searching:
            return {}, {}
        wanted: list[tuple[int, tuple[str, ...]]] = []
        found: dict[str, CitedAbstract] = {}
        for index, (leaf, result) in enumerate(zip(leaves, cited, strict=True)):
            if result.verdict in SETTLED:
                continue
            hits = self.search(leaf.text, limit=self.requery_abstracts + len(leaf.citations))
            others = [hit for hit in hits if hit.pmid not in leaf.citations][: self.requery_abstracts]
            found.update((hit.pmid, hit) for hit in others)
            if others:
                wanted.append((index, tuple(hit.pmid for hit in others)))
        claims = [Claim(text=leaves[i].text, display_text=leaves[i].text, citations=pmids) for i, pmids in wanted]
        results = self.verifier.verify(claims, found, set(found)) if claims else []
        return {index: result for (index, _), result in zip(wanted, results, strict=True)}, found

    def _claim_nodes(
        self,
        leaves: Sequence[_Leaf],
        cited: Sequence[SentenceResult],
        elsewhere: Mapping[int, SentenceResult],
        abstracts: Mapping[str, CitedAbstract],
    ) -> list[tuple[_Leaf, ClaimNode]]:
        nodes = []
        for index, (leaf, result) in enumerate(zip(leaves, cited, strict=True)):
            other = elsewhere.get(index)
            other_labels = [citation.label for citation in other.citations] if other else []
            verdict = claim_verdict(result.verdict, other_labels)
            confidence = result.confidence
            if verdict in (SUPPORT_ELSEWHERE, CONTRADICT_ELSEWHERE) and other is not None:
                label = SUPPORT if verdict == SUPPORT_ELSEWHERE else CONTRADICT
                values = [c.confidence for c in other.citations if c.label == label and c.confidence is not None]
                confidence = max(values) if values else None
            evidence = [_evidence(c, abstracts.get(c.pmid), cited=True) for c in result.citations]
            if other is not None:
                evidence += [_evidence(c, abstracts.get(c.pmid), cited=False) for c in other.citations]
            nodes.append(
                (
                    leaf,
                    ClaimNode(
                        text=leaf.text,
                        verdict=verdict,
                        confidence=confidence,
                        requeried=index in elsewhere or (result.verdict not in SETTLED and self._searching),
                        evidence=tuple(evidence),
                    ),
                )
            )
        return nodes

    @staticmethod
    def _sentence_node(
        index: int, sentence: Claim, split: SentenceClaims | None, claims: Sequence[ClaimNode]
    ) -> SentenceNode:
        return SentenceNode(
            position=index,
            text=sentence.display_text,
            citations=sentence.citations,
            verdict=sentence_verdict([claim.verdict for claim in claims]),
            from_model=split.from_model if split is not None else False,
            note=split.note if split is not None else "",
            claims=tuple(claims),
        )


def _ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
