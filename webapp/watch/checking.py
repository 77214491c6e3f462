"""Checking an answer again as it stands, without rewriting it: its sentences against the cited abstracts as stored
now, by the verifier the site runs now; the cited papers' retraction status; and the question's search run again
with its own settings over the current index, for newly retrieved abstracts that contradict a sentence.

The verify stage's own inputs and the retrieve stage's own search are used (webapp/qa/verification.py,
webapp/qa/source_screening.py), so a re-check reads what a fresh answer's stages would read.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from generator.claims import Claim
from verifier.verdicts import CONTRADICT
from verifier.verify import AnswerVerifier, CitedAbstract
from webapp.corpus import engines
from webapp.corpus.models import Article
from webapp.corpus.services.retractions import retractions_resolve
from webapp.qa.models import Question
from webapp.qa.pipeline import SITE_VERIFIER, PipelineSettings, pipeline_rereading
from webapp.qa.source_screening import sources_search
from webapp.qa.verification import answer_verifier, cited_abstracts, question_verification_inputs
from webapp.watch.changes import AnswerState, Contradiction, Reading, verdict_key

# Newly retrieved abstracts read against every sentence, best ranked first: each costs one verifier pair per
# sentence, and the search's first few are the ones a new answer would be written from.
NEW_ABSTRACTS_READ = 10


@dataclass(frozen=True)
class AnswerCheck:
    state: AnswerState  # its `contradicting` is empty: `found` holds this check's
    found: tuple[Contradiction, ...]
    reading: Reading
    models: dict[str, str]


def cited_pmids(claims: Sequence[Claim], given: Collection[str]) -> list[str]:
    """The papers the answer cites and links: a citation of a paper the model was never given is never linked."""
    return list(dict.fromkeys(pmid for claim in claims for pmid in claim.citations if pmid in given))


def retraction_statuses(*, pmids: Collection[str]) -> dict[str, str]:
    """The status of each stored paper, resolved again from its correction links first (the rule ingestion
    applies), so a re-check never reads a status a newer notice has not been applied to."""
    retractions_resolve(pmids=pmids)
    return dict(Article.objects.filter(pmid__in=list(pmids)).values_list("pmid", "retraction_status"))


def answer_check(*, question: Question) -> AnswerCheck:
    """What `question`'s answer gives checked now; nothing is written but the cited papers' resolved statuses."""
    # The question's own settings (its search above all), with the verifier the site runs now.
    pipeline = pipeline_rereading(question, site_parts=SITE_VERIFIER)
    verifier = answer_verifier(pipeline)
    inputs = question_verification_inputs(question)
    results = verifier.verify(inputs.claims, inputs.abstracts, inputs.given)
    verdicts = {
        verdict_key(position, citation.pmid): citation.label
        for position, result in enumerate(results)
        for citation in result.citations
    }
    cited = cited_pmids(inputs.claims, inputs.given)
    found, new_abstracts = _contradictions(question, pipeline, verifier, inputs.claims, exclude=cited)
    statuses = retraction_statuses(pmids=cited)
    articles = Article.objects.only("pmid", "title", "retraction_notices").in_bulk(cited, field_name="pmid")
    reading = Reading(
        sentences={position: claim.display_text for position, claim in enumerate(inputs.claims)},
        titles={
            **{pmid: abstract.title for pmid, abstract in new_abstracts.items()},
            **{pmid: article.title for pmid, article in articles.items()},
        },
        notices={pmid: list(article.retraction_notices or ()) for pmid, article in articles.items()},
    )
    models = {
        "verifier": verifier.classifier.model_id,
        "evidence": verifier.evidence.model_id,
        "embedding": engines.embedder().model_id,
    }
    state = AnswerState(verdicts=verdicts, retraction=statuses)
    return AnswerCheck(state=state, found=found, reading=reading, models=models)


def _contradictions(
    question: Question,
    pipeline: PipelineSettings,
    verifier: AnswerVerifier,
    claims: Sequence[Claim],
    *,
    exclude: Collection[str],
) -> tuple[tuple[Contradiction, ...], dict[str, CitedAbstract]]:
    """Abstracts the search finds now that the question's retrieval did not, each read against every sentence as if
    the sentence cited it; those labelled CONTRADICT (shown, so above the verifier's Unclear threshold)."""
    hits = sources_search(query=question.text, pipeline=pipeline)
    known = set(question.retrieved.values_list("pmid", flat=True)) | set(exclude)
    new = [hit.pmid for hit in hits if hit.pmid not in known][:NEW_ABSTRACTS_READ]
    abstracts = cited_abstracts(pmids=new)
    readable = [pmid for pmid in new if pmid in abstracts]
    if not readable or not claims:
        return (), abstracts
    as_citing = [Claim(text=claim.text, display_text=claim.display_text, citations=tuple(readable)) for claim in claims]
    results = verifier.verify(as_citing, abstracts, set(readable))
    found = tuple(
        Contradiction(pmid=citation.pmid, sentence=position, confidence=citation.confidence)
        for position, result in enumerate(results)
        for citation in result.citations
        if citation.label == CONTRADICT
    )
    return found, abstracts
