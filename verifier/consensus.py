"""How the top retrieved abstracts answer a yes/no question: the verifier's verdict on its claim against each.

The claim is the one a "yes" would make (`claim_rewriting.yes_no_claim`, the rewrite the verifier's BioASQ and
PubMedQA training pairs are made with), so the verifier reads it in the form it learned. Every abstract goes through
the same path as a cited one (`AnswerVerifier`: evidence sentences, then the classifier and its calibrated decision
rule), in one batch; an abstract the verifier is not confident about counts as Unclear, never as a side.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from generator.claims import Claim
from indexer.base import FusedHit
from indexer.hybrid import dense_closest
from verifier.verdicts import CONTRADICT, NO_EVIDENCE, SUPPORT, UNCLEAR
from verifier.verify import AnswerVerifier, CitedAbstract

# The abstracts read: the first 10 retrieved. Ten is the search's default top_k, so by default it is every source the
# page lists and the abstracts the model was given; a question that asked for more sources (the API allows 20) does
# not make verification twice as slow for abstracts ranked where hybrid search finds little that is on topic.
CONSENSUS_ABSTRACTS = 10
# Fewer abstracts than this that support or contradict the claim are too few to call a consensus, and the page says
# so: with four, one paper more either way moves the balance by a quarter.
SPEAKING_MINIMUM = 5
# The labels counted, in the order the page and the exports show them.
CONSENSUS_LABELS = (SUPPORT, CONTRADICT, NO_EVIDENCE, UNCLEAR)


def pmids_to_read(ranked: Sequence[str], closest: str | None) -> list[str]:
    """The abstracts the consensus reads: the first `CONSENSUS_ABSTRACTS` of the search's ranking and, when the
    ranking put it below them, the candidate the dense search found closest to the question (`closest`,
    `indexer.hybrid.dense_closest`). A yes/no question is usually answered by one abstract, and fusion weighs BM25
    most: on PubMedQA-kind dev questions the question's own abstract is more often the dense leg's closest than among
    the fused ten (benchmarks/HISTORY.md, "The bottom line")."""
    read = list(ranked[:CONSENSUS_ABSTRACTS])
    return [*read, closest] if closest is not None and closest not in read else read


def hits_to_read(candidates: Sequence[FusedHit], *, top_k: int) -> list[FusedHit]:
    """`pmids_to_read` over one search's fused candidates (`indexer.hybrid.candidates_settings`), whose first `top_k`
    are the sources: the hits the consensus reads, as the evaluation and the benchmarks read them."""
    closest = dense_closest(candidates)
    by_pmid = {hit.pmid: hit for hit in candidates}
    ranked = [hit.pmid for hit in candidates[:top_k]]
    return [by_pmid[pmid] for pmid in pmids_to_read(ranked, closest.pmid if closest else None)]


@dataclass(frozen=True)
class AbstractVerdict:
    pmid: str
    label: str  # one of CONSENSUS_LABELS
    confidence: float | None  # calibrated; None where the classifier gives no probability (the LLM judge)
    evidence_spans: tuple[tuple[int, int], ...]  # character offsets into the abstract, for highlighting
    leaning: str = NO_EVIDENCE  # the verifier's label before the Unclear threshold (what an Unclear verdict leans to)
    probabilities: dict[str, float] = field(default_factory=dict)  # calibrated, per label


@dataclass(frozen=True)
class Consensus:
    claim: str | None  # None: a yes/no question whose claim the rewrite cannot read (no verdicts)
    verdicts: tuple[AbstractVerdict, ...]  # in retrieval order

    def pmids(self, label: str) -> tuple[str, ...]:
        return tuple(verdict.pmid for verdict in self.verdicts if verdict.label == label)

    def count(self, label: str) -> int:
        return len(self.pmids(label))

    @property
    def speaking(self) -> int:
        """The abstracts that take a side: they support or contradict the claim."""
        return self.count(SUPPORT) + self.count(CONTRADICT)

    @property
    def enough(self) -> bool:
        return self.speaking >= SPEAKING_MINIMUM


def claim_consensus(verifier: AnswerVerifier, claim: str, abstracts: Sequence[CitedAbstract]) -> Consensus:
    """The verifier's verdict on `claim` against each of `abstracts` (a PMID listed twice is read once)."""
    by_pmid = {abstract.pmid: abstract for abstract in abstracts}
    pmids = tuple(by_pmid)
    [result] = verifier.verify([Claim(text=claim, display_text=claim, citations=pmids)], by_pmid, set(pmids))
    return Consensus(
        claim=claim,
        verdicts=tuple(
            AbstractVerdict(
                pmid=citation.pmid,
                label=citation.label,
                confidence=citation.confidence,
                evidence_spans=citation.evidence_spans,
                leaning=citation.leaning or citation.label,
                probabilities=dict(citation.probabilities),
            )
            for citation in result.citations
        ),
    )


def answer_stance(verifier: AnswerVerifier, claim: str, answer_text: str) -> str | None:
    """What the answer's own text says about `claim`: "yes" when the verifier reads it as supporting the claim, "no"
    when contradicting it, None when it takes no side the verifier is sure of. The answer is read as the verifier
    reads an abstract (its own words, citations stripped), so no second call to the language model is needed."""
    if not answer_text.strip():
        return None
    reading = CitedAbstract(pmid="answer", title="", abstract=answer_text)
    [result] = verifier.verify(
        [Claim(text=claim, display_text=claim, citations=("answer",))], {"answer": reading}, {"answer"}
    )
    return {SUPPORT: "yes", CONTRADICT: "no"}.get(result.citations[0].label)
