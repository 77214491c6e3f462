"""A yes/no question's consensus as the question stores it: what its first retrieved abstracts say about its claim.

Stored as JSON on the question (`Question.consensus`), the one shape the page, the API and the exports read:
counts and PMIDs per label, keyed as the counts are (`support`, `contradict`, `no_evidence`, `unclear`), the claim
that was checked and each abstract's verdict with the evidence the verifier read.
"""

from __future__ import annotations

import logging
from typing import Any

from verifier.claim_rewriting import yes_no_claim
from verifier.consensus import CONSENSUS_ABSTRACTS, CONSENSUS_LABELS, SPEAKING_MINIMUM, Consensus, claim_consensus
from verifier.verify import AnswerVerifier, CitedAbstract
from webapp.corpus.models import Article
from webapp.qa.models import Question

logger = logging.getLogger(__name__)

CONSENSUS_KEYS = {label: label.lower() for label in CONSENSUS_LABELS}


def consensus_json(consensus: Consensus) -> dict[str, Any]:
    return {
        "claim": consensus.claim,
        "read": len(consensus.verdicts),
        **{key: consensus.count(label) for label, key in CONSENSUS_KEYS.items()},
        "pmids": {key: list(consensus.pmids(label)) for label, key in CONSENSUS_KEYS.items()},
        "speaking_minimum": SPEAKING_MINIMUM,
        "verdicts": {
            verdict.pmid: {
                "label": verdict.label,
                "confidence": verdict.confidence,
                "evidence_spans": [list(span) for span in verdict.evidence_spans],
            }
            for verdict in consensus.verdicts
        },
    }


def question_consensus(*, question: Question, verifier: AnswerVerifier) -> dict[str, Any] | None:
    """The consensus of the question's first retrieved abstracts on its claim; None when it does not ask yes or no
    by its form, or the rewrite cannot read it."""
    claim = yes_no_claim(question.text)
    if claim is None:
        return None
    pmids = list(question.retrieved.order_by("rank").values_list("pmid", flat=True)[:CONSENSUS_ABSTRACTS])
    articles = Article.objects.only("pmid", "title", "abstract").in_bulk(pmids, field_name="pmid")
    # An article removed from the corpus since retrieval (a deletion file) has nothing left to read.
    abstracts = [
        CitedAbstract(pmid=pmid, title=articles[pmid].title, abstract=articles[pmid].abstract)
        for pmid in pmids
        if pmid in articles
    ]
    return consensus_json(claim_consensus(verifier, claim, abstracts))


def question_consensus_or_none(*, question: Question, verifier: AnswerVerifier) -> dict[str, Any] | None:
    """`question_consensus`, or None when making it failed: the consensus is an extra beside the answer, so whatever
    goes wrong (a time limit included) is logged and leaves it out, and the answer's own verdicts are stored."""
    try:
        return question_consensus(question=question, verifier=verifier)
    except Exception:
        logger.exception("question %s: the consensus could not be made; the answer is stored without it", question.pk)
        return None
