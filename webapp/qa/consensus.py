"""A yes/no question's consensus as the question stores it: what its first retrieved abstracts say about its claim.

Stored as JSON on the question (`Question.consensus`), the one shape the page, the API and the exports read:
counts and PMIDs per label, keyed as the counts are (`support`, `contradict`, `no_evidence`, `unclear`), the claim
that was checked and each abstract's verdict with the evidence the verifier read.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from generator.errors import GenerationError
from verifier.bottom_line import (
    SIDES,
    AbstractReader,
    BottomLine,
    BottomLineRule,
    ModelReading,
    Retrieved,
    RetrievedAbstract,
    consensus_votes,
    decide_bottom_line,
    load_bottom_line_rule,
    read_closest_abstract,
    retrieved_abstracts,
    takes_other_side,
    vote_relevance,
)
from verifier.claim_rewriting import is_yes_no_question, yes_no_claim
from verifier.consensus import (
    CONSENSUS_ABSTRACTS,
    CONSENSUS_LABELS,
    SPEAKING_MINIMUM,
    Consensus,
    answer_stance,
    claim_consensus,
    pmids_to_read,
)
from verifier.verify import AnswerVerifier, CitedAbstract
from webapp.corpus.models import Article
from webapp.qa.models import Question

logger = logging.getLogger(__name__)

CONSENSUS_KEYS = {label: label.lower() for label in CONSENSUS_LABELS}

AnswerStanceReader = Callable[[], str | None]  # the answer model's reading of the written answer's stance


def consensus_json(
    consensus: Consensus,
    bottom_line: BottomLine | None = None,
    *,
    closest_read: str | None = None,
    **bottom_line_facts: Any,
) -> dict[str, Any]:
    """`closest_read` names the abstract read beyond the first retrieved: the candidate the dense search found closest
    to the question, which fusion ranked below them (`verifier.consensus.pmids_to_read`)."""
    stored = {
        "claim": consensus.claim,
        "read": len(consensus.verdicts),
        "closest_read": closest_read,
        **{key: consensus.count(label) for label, key in CONSENSUS_KEYS.items()},
        "pmids": {key: list(consensus.pmids(label)) for label, key in CONSENSUS_KEYS.items()},
        "speaking_minimum": SPEAKING_MINIMUM,
        "verdicts": {
            verdict.pmid: {
                "label": verdict.label,
                "confidence": verdict.confidence,
                "evidence_spans": [list(span) for span in verdict.evidence_spans],
                "leaning": verdict.leaning,
                "probabilities": {label: round(value, 4) for label, value in verdict.probabilities.items()},
            }
            for verdict in consensus.verdicts
        },
    }
    if bottom_line is not None:
        # No claim to check: the answer LLM's reading alone decided it (model_alone_consensus).
        stored["bottom_line"] = bottom_line_json(bottom_line, model_alone=consensus.claim is None, **bottom_line_facts)
    return stored


def bottom_line_json(
    bottom_line: BottomLine,
    *,
    model_weight: float = 0.0,
    model_reading_failed: bool = False,
    model_alone: bool = False,
    answer_model_stance: str | None = None,
) -> dict[str, Any]:
    """The bottom line as the page, the API and the exports read it (`verifier.bottom_line` says how it is decided);
    `model_weight` is what the answer LLM's reading weighed, `model_alone` that no abstract was read by the verifier
    (the question's claim could not be read), so that reading alone decided it; `answer_model_stance` the written
    answer's stance as the answer model reads it (`generator.answer_model_stance`), asked only of a Yes or a No."""
    return {
        "answer": bottom_line.answer,
        "title": bottom_line.title,
        "rests_on": bottom_line.rests_on,
        "yes_pmids": list(bottom_line.yes_pmids),
        "no_pmids": list(bottom_line.no_pmids),
        "yes_weight": round(bottom_line.yes_weight, 4),
        "no_weight": round(bottom_line.no_weight, 4),
        "weights": bottom_line.weights,
        "abstaining": bottom_line.abstaining,
        "retracted_pmids": list(bottom_line.retracted_pmids),
        **answer_stance_fields(bottom_line.answer, bottom_line.stance, answer_model_stance),
        # The answer LLM's reading of the closest abstract, one more voice (None: the rule does not weigh it, or the
        # model could not be asked; `model_reading_failed` says which).
        "model_reading": (
            {
                "pmid": bottom_line.model_reading.pmid,
                "side": bottom_line.model_side,
                "log_odds_no": round(bottom_line.model_reading.log_odds_no, 3),
                "weight": round(model_weight, 4),
            }
            if bottom_line.model_reading is not None
            else None
        ),
        "model_reading_failed": model_reading_failed,
        "model_alone": model_alone,
    }


def answer_stance_fields(answer: str, stance: str | None, answer_model_stance: str | None) -> dict[str, Any]:
    """What the written answer says, as the verifier (`stance`) and the answer model read it, and whether it takes
    the other side of a Yes or No bottom line (`answer`): the page says so rather than show both silently. Either
    reader is enough: the verifier is often Unclear on an answer's words, the model rarely is."""
    return {
        "answer_stance": stance,
        "answer_model_stance": answer_model_stance,
        "answer_disagrees": takes_other_side(stance, answer) or takes_other_side(answer_model_stance, answer),
    }


def with_the_answers_stance(
    stored: dict[str, Any],
    *,
    question: Question,
    verifier: AnswerVerifier,
    answer_text: str,
    read_answer_stance: AnswerStanceReader | None = None,
) -> dict[str, Any]:
    """A consensus made before the answer was written (its bottom line given to the model), completed with what the
    written answer says: its votes are the same abstracts read the same way, so they are not read again. Reading
    the answer is an extra, like the consensus: if it fails, the consensus is kept as it was and the failure logged."""
    line = stored.get("bottom_line")
    if not line:
        return stored
    answer = str(line["answer"])
    try:
        claim = stored.get("claim")
        stance = answer_stance(verifier, claim, answer_text) if claim and answer_text else None
    except Exception:
        logger.exception("question %s: the answer's stance could not be read; its consensus is kept", question.pk)
        return stored
    own = own_answer_stance(read_answer_stance, answer, question)
    return {**stored, "bottom_line": {**line, **answer_stance_fields(answer, stance, own)}}


@cache
def bottom_line_rule(verifier_model: str) -> BottomLineRule:
    """The rule kept beside the configured verifier checkpoint (read once per process)."""
    return load_bottom_line_rule(Path(verifier_model) if verifier_model else None)


def question_consensus(
    *,
    question: Question,
    verifier: AnswerVerifier,
    rule: BottomLineRule,
    answer_text: str = "",
    read_model: AbstractReader | None = None,
    read_answer_stance: AnswerStanceReader | None = None,
) -> dict[str, Any] | None:
    """The consensus of the question's first retrieved abstracts on its claim, with its bottom line; None when it
    does not ask yes or no by its form. `answer_text` is the answer's own words, read for its stance; `read_model`
    the answer LLM's reading of an abstract, asked when the rule weighs it; `read_answer_stance` the answer model's
    reading of the written answer's stance, asked only when the bottom line is Yes or No (`own_answer_stance`).
    A question asked yes or no whose claim the rewrite cannot read has no votes: its bottom line is that reading
    alone (`model_alone_consensus`), and it has none when the rule does not weigh the reading or the reading could
    not be made."""
    if not is_yes_no_question(question.text):
        return None
    claim = yes_no_claim(question.text)
    if not rule.reads_with_model:
        read_model = None  # the rule does not weigh the reading: it is never asked for
    if claim is None and read_model is None:
        return None
    ranked = dict(question.retrieved.order_by("rank").values_list("pmid", "semantic_score"))
    closest = question.closest_candidate or {}
    pmids = pmids_to_read(list(ranked), closest.get("pmid"))
    # The closest candidate's score is on the stored sources' scale: the same search normalised both.
    semantic_scores = {pmid: ranked.get(pmid, closest.get("semantic_score")) for pmid in pmids}
    articles = Article.objects.only("pmid", "title", "abstract", "retraction_status").in_bulk(pmids, field_name="pmid")
    # An article removed from the corpus since retrieval (a deletion file) has nothing left to read.
    abstracts = [
        CitedAbstract(pmid=pmid, title=articles[pmid].title, abstract=articles[pmid].abstract)
        for pmid in pmids
        if pmid in articles
    ]
    if not abstracts:
        # A question asked of the asker's own library alone: the consensus reads PubMed abstracts (their design and
        # retraction status weigh the votes, and its rule was fitted on them), so it is left out, not shown empty.
        return None
    retracted = {
        pmid for pmid, article in articles.items() if article.retraction_status == Article.Retraction.RETRACTED
    }
    relevance = vote_relevance({abstract.pmid: semantic_scores[abstract.pmid] for abstract in abstracts})
    first = set(list(ranked)[:CONSENSUS_ABSTRACTS])
    closest_read = next((abstract.pmid for abstract in abstracts if abstract.pmid not in first), None)
    if claim is None:
        assert read_model is not None  # returned above otherwise
        retrieved = retrieved_abstracts(
            [abstract.pmid for abstract in abstracts], relevance=relevance, retracted=retracted
        )
        return model_alone_consensus(read_model, question, rule, retrieved, abstracts, read_answer_stance)
    consensus = claim_consensus(verifier, claim, abstracts)
    votes = consensus_votes(consensus, retracted=retracted, relevance=relevance)
    stance = answer_stance(verifier, claim, answer_text) if answer_text else None
    model_reading, failed = None, False
    if read_model is not None:
        model_reading, failed = _model_reading(read_model, question, votes, abstracts)
    bottom_line = decide_bottom_line(votes, rule, stance=stance, model_reading=model_reading)
    model_weight = rule.model_weight if model_reading is not None else 0.0
    return consensus_json(
        consensus,
        bottom_line,
        closest_read=closest_read,
        model_weight=model_weight,
        model_reading_failed=failed,
        answer_model_stance=own_answer_stance(read_answer_stance, bottom_line.answer, question),
    )


def model_alone_consensus(
    read_model: AbstractReader,
    question: Question,
    rule: BottomLineRule,
    retrieved: Sequence[RetrievedAbstract],
    abstracts: Sequence[CitedAbstract],
    read_answer_stance: AnswerStanceReader | None = None,
) -> dict[str, Any] | None:
    """The consensus of a question with no claim to check: no abstract is read by the verifier (`claim` None, `read`
    0), and the bottom line is the answer LLM's reading of the closest abstract alone, under the rule's cut. None
    when that reading could not be made: with nothing else to go on there is no bottom line to show."""
    model_reading, _failed = _model_reading(read_model, question, retrieved, abstracts)
    if model_reading is None:
        return None
    bottom_line = decide_bottom_line((), rule, model_reading=model_reading)
    return consensus_json(
        Consensus(claim=None, verdicts=()),
        bottom_line,
        model_weight=rule.model_weight,
        answer_model_stance=own_answer_stance(read_answer_stance, bottom_line.answer, question),
    )


def own_answer_stance(read_answer_stance: AnswerStanceReader | None, answer: str, question: Question) -> str | None:
    """The answer model's reading of the written answer's stance (yes, no or maybe), asked only when the bottom line
    is Yes or No: only then can the answer disagree with it. None when not asked or when asking failed: a model
    server that is down leaves the check to the verifier's reading of the answer."""
    if read_answer_stance is None or answer not in SIDES:
        return None
    try:
        return read_answer_stance()
    except GenerationError:
        logger.warning("question %s: the answer model's stance could not be read", question.pk, exc_info=True)
        return None


def _model_reading(
    read_model: AbstractReader, question: Question, retrieved: Sequence[Retrieved], abstracts: Sequence[CitedAbstract]
) -> tuple[ModelReading | None, bool]:
    """The answer LLM's reading of the closest abstract, and whether asking for it failed: a model server that is
    down leaves the bottom line to the verifier's votes (and the page says so), not the question without one."""
    try:
        return read_closest_abstract(read_model, question.text, retrieved, abstracts), False
    except GenerationError:
        logger.warning("question %s: the answer model's reading could not be made", question.pk, exc_info=True)
        return None, True


def question_consensus_or_none(
    *,
    question: Question,
    verifier: AnswerVerifier,
    rule: BottomLineRule,
    answer_text: str = "",
    read_model: AbstractReader | None = None,
    read_answer_stance: AnswerStanceReader | None = None,
) -> dict[str, Any] | None:
    """`question_consensus`, or None when making it failed: the consensus is an extra beside the answer, so whatever
    goes wrong (a time limit included) is logged and leaves it out, and the answer's own verdicts are stored."""
    try:
        return question_consensus(
            question=question,
            verifier=verifier,
            rule=rule,
            answer_text=answer_text,
            read_model=read_model,
            read_answer_stance=read_answer_stance,
        )
    except Exception:
        logger.exception("question %s: the consensus could not be made; the answer is stored without it", question.pk)
        return None
