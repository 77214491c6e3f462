"""How far the deep check can go with this verifier: every compound read as the two source claims it was built
from, A and b (the claims file's own claims, not a split anyone made).

The deep check's own run depends on the language model's split; this one does not. Each claim is judged against the
compound's document exactly as the deep check judges a claim (`AnswerVerifier`, one batch), so what is left between
it and the truth is the verifier alone. Reported beside the plain verdict:
- the deep check's rule on the gold split (every claim shown SUPPORT; and by the decision rule's leaning);
- a threshold-free ceiling: ROC AUC of the weakest claim's calibrated P(SUPPORT), and the best balanced accuracy any
  threshold on it reaches on these very items (optimistic: chosen on what it scores). A bottom-up rule over these
  claim verdicts cannot do much better than that, however the claims are found; the same two figures for the plain
  verdict's P(SUPPORT) show the room there is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from generator.claims import Claim
from verifier.compounds import Compound
from verifier.metrics import balanced_accuracy, threshold_ceiling
from verifier.verdicts import SUPPORT, overall_verdict
from verifier.verify import AnswerVerifier, CitedAbstract, SentenceResult


def support_probability(result: SentenceResult) -> float:
    """The calibrated P(SUPPORT) of the claim's one cited abstract (0 where the classifier gives none)."""
    citation = result.citations[0]
    return float(citation.probabilities.get(SUPPORT, 0.0))


def leans_to_support(result: SentenceResult) -> bool:
    """Its verdict by the decision rule's labels, Unclear or not (what the page shows as Unclear counts by its
    leaning): the plain verdict's and each gold claim's."""
    return overall_verdict([c.leaning or c.label for c in result.citations]) == SUPPORT


def gold_split_scores(
    compounds: Sequence[Compound],
    plain_results: Sequence[SentenceResult],
    verifier: AnswerVerifier,
    abstracts: dict[str, CitedAbstract],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the plain verdict's ceiling, the gold split's figures) on `compounds`, whose plain results are given."""
    gold = [compound.supported for compound in compounds]
    claims = [
        Claim(text=text, display_text=text, citations=(compound.document.doc_id,))
        for compound in compounds
        for text in (compound.first, compound.second)
    ]
    results = verifier.verify(claims, abstracts, set(abstracts)) if claims else []
    firsts, seconds = results[0::2], results[1::2]
    shown = [a.verdict == SUPPORT and b.verdict == SUPPORT for a, b in zip(firsts, seconds, strict=True)]
    leaning = [leans_to_support(a) and leans_to_support(b) for a, b in zip(firsts, seconds, strict=True)]
    weakest = [min(support_probability(a), support_probability(b)) for a, b in zip(firsts, seconds, strict=True)]
    split = {
        "balanced_accuracy": balanced_accuracy(shown, gold),
        "balanced_accuracy_leaning": balanced_accuracy(leaning, gold),
        **threshold_ceiling(weakest, gold),
        # b alone: A is SUPPORT by construction, so this is how well the verifier tells b's label.
        "second_claim": threshold_ceiling([support_probability(b) for b in seconds], gold),
    }
    return threshold_ceiling([support_probability(r) for r in plain_results], gold), split
