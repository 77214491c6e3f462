"""Answered questions built as rows, for the review tests: two abstracts, three verified sentences."""

from __future__ import annotations

from django.contrib.auth.models import User

from webapp.corpus.models import Article
from webapp.qa.models import AnswerSentence, CitationVerdict, Question, RetrievedDocument

ABSTRACT_A = "Metformin was given to 5,000 patients. No lactic acidosis occurred. HbA1c fell by 1.1 points."
ABSTRACT_B = "Everolimus binds FKBP12. The complex inhibits mTORC1. Growth slowed in renal lines."


def articles_create() -> None:
    Article.objects.get_or_create(
        pmid="111", defaults={"title": "<b>Metformin</b> safety", "abstract": ABSTRACT_A, "year": 2010}
    )
    Article.objects.get_or_create(pmid="222", defaults={"title": "Everolimus and mTORC1", "abstract": ABSTRACT_B})


def answered_question(*, user: User | None, text: str = "Is metformin safe?") -> Question:
    """Sentence 0 cites 111 (SUPPORT, evidence sentence 1); sentence 1 cites 111 and 222 (CONTRADICT on 222);
    sentence 2 cites 999, a paper the model was never given (NO_REFERENCE)."""
    articles_create()
    question = Question.objects.create(
        text=text, user=user, status=Question.Status.DONE, context={"given": ["111", "222"]}
    )
    for rank, pmid in enumerate(["111", "222"], start=1):
        RetrievedDocument.objects.create(
            question=question, rank=rank, pmid=pmid, score=1.0 / rank, lexical_score=1.0, semantic_score=0.5
        )
    first = AnswerSentence.objects.create(
        question=question,
        position=0,
        text="Metformin did not cause lactic acidosis (PUBMED:111).",
        display_text="Metformin did not cause lactic acidosis.",
        verdict="SUPPORT",
        confidence=0.93,
    )
    start = ABSTRACT_A.index("No lactic")
    CitationVerdict.objects.create(
        sentence=first,
        position=0,
        pmid="111",
        label="SUPPORT",
        confidence=0.93,
        evidence_sentences=[1],
        evidence_spans=[[start, start + len("No lactic acidosis occurred.")]],
    )
    second = AnswerSentence.objects.create(
        question=question,
        position=1,
        text="Everolimus activates mTORC1 (PUBMED:111, PUBMED:222).",
        display_text="Everolimus activates mTORC1.",
        verdict="CONTRADICT",
        confidence=0.88,
    )
    CitationVerdict.objects.create(sentence=second, position=0, pmid="111", label="NO_EVIDENCE", confidence=0.7)
    CitationVerdict.objects.create(
        sentence=second, position=1, pmid="222", label="CONTRADICT", confidence=0.88, evidence_sentences=[1]
    )
    third = AnswerSentence.objects.create(
        question=question,
        position=2,
        text="It cures everything (PUBMED:999).",
        display_text="It cures everything.",
        verdict="NO_REFERENCE",
    )
    CitationVerdict.objects.create(sentence=third, position=0, pmid="999", label="NO_REFERENCE")
    return question
