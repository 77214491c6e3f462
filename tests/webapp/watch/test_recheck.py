"""The re-check of a watched answer: the verdicts recomputed on the abstracts as stored now, retraction notices
applied, newly retrieved contradicting abstracts listed; only the differences stored, once; the answer never
rewritten; its watcher notified only when something changed."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from indexer.records import Correction, Notice
from tests.webapp.watch.conftest import CITED, CONTRADICTING, OTHER, QUESTION, SILENT, FakeSearch
from webapp.corpus.models import Article
from webapp.corpus.services.articles import DatabaseArticleSink
from webapp.qa.models import CitationVerdict, Question
from webapp.qa.pipeline import PipelineSettings
from webapp.watch import services
from webapp.watch.models import Notification, Recheck
from webapp.watch.services import question_recheck

pytestmark = pytest.mark.django_db


def _answer_rows(question: Question) -> tuple[object, ...]:
    question.refresh_from_db()
    verdicts = list(
        CitationVerdict.objects.filter(sentence__question=question)
        .order_by("sentence__position", "position")
        .values_list("sentence__position", "pmid", "label", "confidence")
    )
    return question.answer_text, question.status, question.updated_at, verdicts


def test_a_revised_abstract_changes_the_verdict_and_notifies_the_watcher(
    watched: Question, owner: User, search: FakeSearch
) -> None:
    before = _answer_rows(watched)
    Article.objects.filter(pmid=CITED).update(abstract="Zorvistatin did not lower blood pressure in adults.")

    recheck = question_recheck(question_id=watched.pk, trigger="sync", key="job-7")

    assert recheck is not None
    assert recheck.changes == [
        {
            "kind": "verdict",
            "sentence": 0,
            "sentence_text": "Zorvistatin lowers blood pressure.",
            "pmid": CITED,
            "before": "SUPPORT",
            "after": "CONTRADICT",
        }
    ]
    assert recheck.summary == "1 verdict changed."
    assert (recheck.trigger, recheck.key) == ("sync", "job-7")
    assert recheck.models_used["verifier"] == "fake-classifier"
    notification = Notification.objects.get()
    assert (notification.user, notification.question, notification.recheck, notification.unread) == (
        owner,
        watched,
        recheck,
        True,
    )
    assert _answer_rows(watched) == before, "the answer, its verdicts and its row are never rewritten"


def _notice_stored(ref_type: str, about: str, *, pmid: str = "90000777") -> None:
    """A notice about `about` as an update file brings it: read without an abstract, saved through the corpus's own
    sink, which resolves the paper's status."""
    notice = Notice(
        pmid=pmid,
        corrections=(Correction(ref_type, about, "J Hypertens Test. 2021;3:1"),),
        citation="Retraction: Zorvistatin in hypertension. J Hypertens Test. 2024.",
    )
    DatabaseArticleSink().save_notices([notice])


def test_a_retraction_notice_about_a_cited_paper_is_applied_and_listed(watched: Question, search: FakeSearch) -> None:
    _notice_stored("RetractionOf", CITED)

    recheck = question_recheck(question_id=watched.pk, trigger="sync", key="job-8")

    assert recheck is not None
    assert recheck.changes == [
        {
            "kind": "retraction",
            "pmid": CITED,
            "title": "Zorvistatin in hypertension.",
            "before": "none",
            "after": "retracted",
            "notices": [
                {
                    "ref_type": "RetractionIn",
                    "pmid": "90000777",
                    "source": "Retraction: Zorvistatin in hypertension. J Hypertens Test. 2024.",
                }
            ],
        }
    ]
    assert recheck.summary == f"PMID {CITED} retracted."
    assert Notification.objects.count() == 1


def test_a_paper_already_retracted_when_watching_began_is_not_news(
    answered: Question, owner: User, search: FakeSearch
) -> None:
    _notice_stored("ErratumFor", OTHER)
    services.watch_create(user=owner, question=answered)

    recheck = question_recheck(question_id=answered.pk, trigger="sync", key="job-9")

    assert recheck is not None
    assert recheck.changes == []
    assert Article.objects.get(pmid=OTHER).retraction_status == Article.Retraction.CORRECTED


def test_a_newly_retrieved_contradicting_abstract_is_listed_with_its_sentence(
    watched: Question, search: FakeSearch
) -> None:
    search.pmids = [CITED, SILENT, CONTRADICTING, OTHER]

    recheck = question_recheck(question_id=watched.pk, trigger="rebuild", key="job-10")

    assert recheck is not None
    assert len(recheck.changes) == 1, "the abstract that says nothing about the answer is not listed"
    change = recheck.changes[0]
    assert {key: change[key] for key in ("kind", "pmid", "title", "sentence", "sentence_text")} == {
        "kind": "contradiction",
        "pmid": CONTRADICTING,
        "title": "Zorvistatin: a pooled analysis.",
        "sentence": 0,
        "sentence_text": "Zorvistatin lowers blood pressure.",
    }
    assert 0.5 <= change["confidence"] <= 1
    assert recheck.summary == "1 new contradicting abstract."
    # The search ran with the question's own settings, on its own text.
    query, pipeline = search.calls[0]
    assert query == QUESTION
    assert pipeline.retrieval == PipelineSettings.model_validate(watched.settings).retrieval
    assert pipeline.verification.verifier == "fake", "verified by the verifier the site runs now"


def test_nothing_changed_is_stored_and_notifies_nobody(watched: Question, search: FakeSearch) -> None:
    recheck = question_recheck(question_id=watched.pk, trigger="sync", key="job-11")

    assert recheck is not None
    assert (recheck.changes, recheck.summary) == ([], "Nothing changed.")
    assert not Notification.objects.exists()


def test_a_change_is_told_once_and_a_redelivered_recheck_stores_nothing_twice(
    watched: Question, search: FakeSearch
) -> None:
    search.pmids = [CITED, CONTRADICTING, OTHER]
    _notice_stored("ExpressionOfConcernFor", CITED)

    first = question_recheck(question_id=watched.pk, trigger="sync", key="job-12")
    again = question_recheck(question_id=watched.pk, trigger="sync", key="job-12")
    later = question_recheck(question_id=watched.pk, trigger="sync", key="job-13")

    assert first is not None
    assert again is not None
    assert later is not None
    assert again.pk == first.pk
    assert {change["kind"] for change in first.changes} == {"retraction", "contradiction"}
    assert later.changes == [], "the next sync does not tell the same news again"
    assert Recheck.objects.count() == 2
    assert Notification.objects.count() == 1


def test_a_recheck_killed_half_way_leaves_nothing_and_runs_whole_again(
    watched: Question, search: FakeSearch, monkeypatch: pytest.MonkeyPatch
) -> None:
    _notice_stored("RetractionOf", CITED)

    def killed(*args: object, **kwargs: object) -> None:
        raise SystemExit("the worker was killed")

    with monkeypatch.context() as patched:
        patched.setattr(Notification.objects, "bulk_create", killed)
        with pytest.raises(SystemExit):
            question_recheck(question_id=watched.pk, trigger="sync", key="job-14")
    assert not Recheck.objects.exists()

    recheck = question_recheck(question_id=watched.pk, trigger="sync", key="job-14")

    assert recheck is not None
    assert [change["kind"] for change in recheck.changes] == ["retraction"]
    assert Notification.objects.count() == 1


def test_an_answer_nobody_watches_or_not_answered_is_not_rechecked(
    answered: Question, owner: User, search: FakeSearch
) -> None:
    assert question_recheck(question_id=answered.pk, trigger="sync", key="job-15") is None

    services.watch_create(user=owner, question=answered)
    Question.objects.filter(pk=answered.pk).update(status=Question.Status.FAILED)
    assert question_recheck(question_id=answered.pk, trigger="sync", key="job-15") is None

    assert not Recheck.objects.exists()
    assert search.calls == []


def test_unwatching_keeps_the_rechecks_made_so_far(watched: Question, owner: User, search: FakeSearch) -> None:
    question_recheck(question_id=watched.pk, trigger="manual", key="manual-1")

    services.watch_delete(user=owner, question=watched)

    assert Recheck.objects.filter(question=watched).count() == 1
    assert question_recheck(question_id=watched.pk, trigger="sync", key="job-16") is None


def test_a_check_computed_before_one_already_stored_is_discarded_and_never_becomes_the_baseline(
    watched: Question, search: FakeSearch
) -> None:
    """Two re-checks of one answer at once (a sync's and the owner's "Re-check now"): the sync's reads the verdicts,
    then, while it searches, the abstract is revised and the owner's is made and stored, telling the change. The
    sync's, stored last but computed first, would tell the verdict changed back and become what the next one
    compares with."""

    def owners_recheck_meanwhile() -> None:
        Article.objects.filter(pmid=CITED).update(abstract="Zorvistatin did not lower blood pressure in adults.")
        newer = question_recheck(question_id=watched.pk, trigger="manual", key="manual-1")
        assert newer is not None
        assert newer.summary == "1 verdict changed."

    search.meanwhile = owners_recheck_meanwhile

    older = question_recheck(question_id=watched.pk, trigger="sync", key="job-1")

    assert older is None, "computed before a check already stored: stale, so not stored"
    assert list(Recheck.objects.values_list("key", flat=True)) == ["manual-1"]
    assert Notification.objects.count() == 1, "no false 'changed back' notice"
    later = question_recheck(question_id=watched.pk, trigger="sync", key="job-2")
    assert later is not None
    assert later.changes == [], "compared with the newest computation: the change is not told again"
    assert Notification.objects.count() == 1
