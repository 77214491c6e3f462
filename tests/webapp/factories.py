"""Rows for the Django tests, built in one place: answered questions as the pipeline stores them.

- `answer_with_references`: for the share, export and page tests: two cited papers with full reference metadata
  (one with a hostile title) and a citation of a paper the model was never given.
- `answer_with_three_verdicts`: for the review and access tests: SUPPORT with evidence, CONTRADICT on a second
  paper, and NO_REFERENCE.
- `unclear_sentence`: an Unclear sentence to add to either.
- `article_retracted`: marks a stored article retracted, as ingestion resolves a retraction notice about it.
- `answer_awaiting_verification`: a question retrieved and answered, waiting for the verify stage (watched answers).
- `recheck_stored`, `notification_stored`: a watched answer's re-check and the notification it raised.
- `follow_up_of`, `follow_up_draft`: a follow-up question in its parent's thread, and a follow-up being rewritten.
- `deep_check_stored`: a finished deep check of an answer, its claims as the deep check stores them (one hostile).
"""

from __future__ import annotations

import hashlib
from datetime import datetime

from django.contrib.auth.models import User
from django.utils import timezone

from indexer.sentences import split_sentences
from webapp.corpus.models import Article
from webapp.deepcheck.models import DeepCheck
from webapp.library.models import Document, DocumentFile, Passage
from webapp.qa.models import AnswerSentence, CitationVerdict, FollowUpDraft, Question, RetrievedDocument
from webapp.qa.services.admission import question_create
from webapp.watch.models import Notification, Recheck

HOSTILE_TITLE = "<script>alert('x')</script> {Unbalanced & 50% of cases_x"
EXPORT_ABSTRACT_A = "We followed 5,000 patients. No lactic acidosis occurred. HbA1c fell by 1.1 points."
EXPORT_ABSTRACT_B = "Everolimus binds FKBP12. The complex inhibits mTORC1. Growth slowed."


def answer_with_references(*, user: User | None, status: str = Question.Status.DONE) -> Question:
    Article.objects.create(
        pmid="10000001",
        title="Metformin and lactic acidosis.",
        abstract=EXPORT_ABSTRACT_A,
        journal="Diabetes Care",
        year=2010,
        volume="33",
        issue="2",
        pages="100-105",
        authors=["Smith JA", "Doe B", "Roe C", "Poe D"],
        author_details=[
            {"name": "Smith JA", "collective": False},
            {"name": "Doe B", "collective": False},
            {"name": "Roe C", "collective": False},
            {"name": "Poe D", "collective": False},
        ],
        doi="10.1000/dc.2010.33",
    )
    Article.objects.create(
        pmid="10000002",
        title=HOSTILE_TITLE,
        abstract=EXPORT_ABSTRACT_B,
        journal="Cancer Research",
        year=2012,
        authors=["RENAL Study Group"],
        author_details=[{"name": "RENAL Study Group", "collective": True}],
    )
    question = Question.objects.create(
        text="Does metformin cause lactic acidosis?",
        user=user,
        status=status,
        answer_text="No (PUBMED:10000001). Everolimus inhibits mTORC1 (PUBMED:10000002, PUBMED:999).",
        context={"given": ["10000001", "10000002"]},
        models_used={"generator": "qwen-test", "verifier": "cross-encoder-test"},
    )
    for rank, pmid in enumerate(["10000001", "10000002"], start=1):
        RetrievedDocument.objects.create(
            question=question, rank=rank, pmid=pmid, score=1.0 / rank, lexical_score=1.0, semantic_score=0.5
        )
    first = AnswerSentence.objects.create(
        question=question,
        position=0,
        text="Metformin did not cause lactic acidosis (PUBMED:10000001).",
        display_text="Metformin did not cause lactic acidosis.",
        verdict="SUPPORT",
        confidence=0.93,
    )
    CitationVerdict.objects.create(
        sentence=first, position=0, pmid="10000001", label="SUPPORT", confidence=0.93, evidence_sentences=[1]
    )
    second = AnswerSentence.objects.create(
        question=question,
        position=1,
        text="Everolimus inhibits mTORC1 (PUBMED:10000002, PUBMED:999).",
        display_text="Everolimus inhibits mTORC1.",
        verdict="NO_EVIDENCE",
        confidence=0.6,
    )
    CitationVerdict.objects.create(sentence=second, position=0, pmid="10000002", label="NO_EVIDENCE", confidence=0.6)
    CitationVerdict.objects.create(sentence=second, position=1, pmid="999", label="NO_REFERENCE")
    return question


def article_retracted(
    *, pmid: str, notice_pmid: str = "90000101", notice: str = "Retracted: a paper. J Test. 2023."
) -> None:
    """The article as it reads once a retraction notice about it is stored (webapp/corpus/services/retractions.py)."""
    Article.objects.filter(pmid=pmid).update(
        retraction_status=Article.Retraction.RETRACTED,
        retraction_notices=[{"ref_type": "RetractionIn", "pmid": notice_pmid, "source": notice}],
    )


# An Unclear citation as the verifier stores it: the model leans SUPPORT at 48% (calibrated), below the threshold
# for showing it, where the plain argmax before calibration said NO_EVIDENCE.
UNCLEAR_PROBABILITIES = {"SUPPORT": 0.48, "CONTRADICT": 0.12, "NO_EVIDENCE": 0.4}
UNCLEAR_RAW_PROBABILITIES = {"SUPPORT": 0.41, "CONTRADICT": 0.09, "NO_EVIDENCE": 0.5}


def unclear_sentence(*, question: Question, position: int, pmid: str, evidence: int = 1) -> AnswerSentence:
    """A sentence citing `pmid` (an article already stored) whose one citation is UNCLEAR, leaning SUPPORT, with the
    abstract's sentence `evidence` as the evidence it leaned on; the sentence's verdict is UNCLEAR too."""
    span = split_sentences(Article.objects.get(pmid=pmid).abstract)[evidence]
    sentence = AnswerSentence.objects.create(
        question=question,
        position=position,
        text=f"Metformin may lower HbA1c (PUBMED:{pmid}).",
        display_text="Metformin may lower HbA1c.",
        verdict="UNCLEAR",
        confidence=0.48,
    )
    CitationVerdict.objects.create(
        sentence=sentence,
        position=0,
        pmid=pmid,
        label="UNCLEAR",
        confidence=0.48,
        leaning="SUPPORT",
        raw_label="NO_EVIDENCE",
        probabilities=UNCLEAR_PROBABILITIES,
        raw_probabilities=UNCLEAR_RAW_PROBABILITIES,
        evidence_sentences=[evidence],
        evidence_spans=[[span.start, span.end]],
    )
    return sentence


REVIEW_ABSTRACT_A = "Metformin was given to 5,000 patients. No lactic acidosis occurred. HbA1c fell by 1.1 points."
REVIEW_ABSTRACT_B = "Everolimus binds FKBP12. The complex inhibits mTORC1. Growth slowed in renal lines."


def review_articles_create() -> None:
    Article.objects.get_or_create(
        pmid="111", defaults={"title": "<b>Metformin</b> safety", "abstract": REVIEW_ABSTRACT_A, "year": 2010}
    )
    Article.objects.get_or_create(
        pmid="222", defaults={"title": "Everolimus and mTORC1", "abstract": REVIEW_ABSTRACT_B}
    )


def answer_with_three_verdicts(*, user: User | None, text: str = "Is metformin safe?") -> Question:
    """Sentence 0 cites 111 (SUPPORT, evidence sentence 1); sentence 1 cites 111 and 222 (CONTRADICT on 222);
    sentence 2 cites 999, a paper the model was never given (NO_REFERENCE)."""
    review_articles_create()
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
    start = REVIEW_ABSTRACT_A.index("No lactic")
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


def answer_awaiting_verification(*, user: User | None, text: str, answer: str, retrieved: list[str]) -> Question:
    """A question as the retrieve and generate stages leave it, waiting for the verify stage: asked through
    `question_create` (so it stores the settings of the moment), `retrieved` (stored articles) ranked in order and
    all given to the model, `answer` written."""
    question = question_create(text=text, user=user, enqueue=False)
    RetrievedDocument.objects.bulk_create(
        RetrievedDocument(question=question, rank=rank, pmid=pmid, score=1 / rank, lexical_score=1, semantic_score=0)
        for rank, pmid in enumerate(retrieved, start=1)
    )
    Question.objects.filter(pk=question.pk).update(
        answer_text=answer, answer_raw=answer, context={"given": retrieved}, status=Question.Status.GENERATING
    )
    return Question.objects.get(pk=question.pk)


# A re-check's changes as the re-check stores them (webapp/watch/changes.py), with a hostile title and sentence.
RECHECK_CHANGES = [
    {
        "kind": "retraction",
        "pmid": "10000001",
        "title": HOSTILE_TITLE,
        "before": "none",
        "after": "retracted",
        "notices": [{"ref_type": "RetractionIn", "pmid": "90000101", "source": "Retracted: a paper. J Test. 2023."}],
    },
    {
        "kind": "verdict",
        "sentence": 1,
        "sentence_text": "Everolimus inhibits <b>mTORC1</b>.",
        "pmid": "10000002",
        "before": "NO_EVIDENCE",
        "after": "CONTRADICT",
    },
    {
        "kind": "contradiction",
        "pmid": "10000003",
        "title": "Metformin and lactate.",
        "sentence": 0,
        "sentence_text": "Metformin did not cause lactic acidosis.",
        "confidence": 0.91,
    },
]


def recheck_stored(
    *,
    question: Question,
    changes: list[dict[str, object]] | None = None,
    summary: str = "PMID 10000001 retracted; 1 verdict changed; 1 new contradicting abstract.",
    trigger: str = Recheck.Trigger.SYNC,
    key: str = "job-1",
    at: datetime | None = None,
) -> Recheck:
    """A re-check of `question` as the re-check service stores it; RECHECK_CHANGES unless other changes are given."""
    return Recheck.objects.create(
        question=question,
        key=key,
        trigger=trigger,
        at=at or timezone.now(),
        changes=RECHECK_CHANGES if changes is None else changes,
        summary=summary if changes is None or changes else "Nothing changed.",
    )


def notification_stored(*, user: User, recheck: Recheck) -> Notification:
    return Notification.objects.create(user=user, question=recheck.question, recheck=recheck)


def follow_up_of(
    *, parent: Question, text: str, status: str = Question.Status.DONE, answer_text: str = "", **fields: object
) -> Question:
    """A follow-up of `parent`, asked by its owner, in its thread, as `question_create` stores one."""
    return Question.objects.create(
        text=text,
        user=parent.user,
        status=status,
        answer_text=answer_text,
        parent=parent,
        thread_id=parent.thread_id or parent.pk,
        settings=parent.settings,
        **fields,
    )


def follow_up_draft(
    *,
    parent: Question,
    text: str = "Is it safe in children?",
    status: str = FollowUpDraft.Status.REWRITING,
    proposal: str = "",
    note: str = "",
) -> FollowUpDraft:
    """A follow-up of `parent`'s owner on its way to being asked; its proposal defaults to the fallback's form."""
    assert parent.user is not None
    return FollowUpDraft.objects.create(
        parent=parent,
        user=parent.user,
        text=text,
        proposal=proposal or f"{text} (following: {parent.text})",
        status=status,
        note=note,
    )


# Model output is untrusted: the second claim carries markup that every page and export must show as text.
HOSTILE_CLAIM = "Everolimus <b onmouseover=\"alert('claim')\">activates</b> mTORC1 _everywhere_."


def deep_check_stored(*, question: Question, status: str = DeepCheck.Status.DONE) -> DeepCheck:
    """A deep check of `answer_with_three_verdicts`'s first two sentences as the service stores it: sentence 0 one
    claim, SUPPORT by the cited 111; sentence 1 split in two, the second claim (hostile text) contradicted by 222, the
    first supported only by a paper the sentence does not cite (333)."""
    evidence = {"confidence": 0.9, "leaning": None, "evidence_spans": [[0, 10]], "evidence_text": ["Metformin"]}
    tree = {
        "sentences": [
            {
                "position": 0, "text": "Metformin did not cause lactic acidosis.", "citations": ["111"],
                "verdict": "SUPPORT", "from_model": True, "note": "",
                "claims": [{"text": "Metformin did not cause lactic acidosis.", "verdict": "SUPPORT", "confidence": 0.9,
                            "requeried": False,
                            "evidence": [{"pmid": "111", "title": "Metformin safety", "cited": True,
                                          "label": "SUPPORT", **evidence}]}],
            },
            {
                "position": 1, "text": "Everolimus activates mTORC1.", "citations": ["111", "222"],
                "verdict": "CONTRADICT", "from_model": True, "note": "",
                "claims": [
                    {"text": "Everolimus binds FKBP12.", "verdict": "SUPPORT_ELSEWHERE", "confidence": 0.8,
                     "requeried": True,
                     "evidence": [{"pmid": "111", "title": "", "cited": True, "label": "NO_EVIDENCE", **evidence},
                                  {"pmid": "333", "title": "FKBP12", "cited": False, "label": "SUPPORT", **evidence}]},
                    {"text": HOSTILE_CLAIM, "verdict": "CONTRADICT", "confidence": 0.88, "requeried": False,
                     "evidence": [{"pmid": "222", "title": "Everolimus and mTORC1", "cited": True,
                                   "label": "CONTRADICT", **evidence}]},
                ],
            },
            {"position": 2, "text": "It cures everything.", "citations": ["999"], "verdict": "NO_REFERENCE",
             "from_model": False, "note": "the reply has no claims for this sentence",
             "claims": [{"text": "It cures everything.", "verdict": "NO_REFERENCE", "confidence": None,
                         "requeried": True, "evidence": []}]},
        ],
        "extraction_raw": "{}",
        "max_tokens": 354,
        "extractor": "qwen-test",
        "timings_ms": {"extraction": 1200.0, "judging": 80.0, "requery": 300.0},
    }  # fmt: skip
    return DeepCheck.objects.create(
        question=question,
        status=status,
        stage="done",
        progress=100,
        tree=tree,
        models_used={"extractor": "qwen-test", "verifier": "cross-encoder-test", "evidence": "tagger-test"},
    )


def library_document(*, owner: User, title: str = "A paper of my own") -> Document:
    """A stored PDF document with two passages, made without the reader (tests of access, not of reading)."""
    document = Document.objects.create(
        owner=owner,
        kind=Document.Kind.PDF,
        filename="mine.pdf",
        sha256=hashlib.sha256(f"{owner.pk}:{title}".encode()).hexdigest(),
        byte_size=8,
        pages=2,
        title=title,
    )
    DocumentFile.objects.create(document=document, data=b"%PDF-1.7")
    Passage.objects.bulk_create(
        [
            Passage(document=document, ordinal=0, section="Results", page=1, text="Private finding one."),
            Passage(document=document, ordinal=1, section="Results", page=2, text="Private finding two."),
        ]
    )
    return document
