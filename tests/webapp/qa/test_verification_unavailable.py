"""A verifier that cannot run keeps the answer: the question ends done, its verification "unavailable" with the
reason, shown plainly on the page, in the page's JSON, in the API and in the exports."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client
from pytest_django.fixtures import Settings

from indexer.records import ArticleRecord
from tests.support import TEST_LLM_MODEL
from webapp.qa.models import Question
from webapp.qa.pipeline import PipelineSettings
from webapp.qa.services import admission, ending, retrieve, verify
from webapp.qa.tasks import question_generate_task, question_retrieve_task, question_verify_task

pytestmark = [pytest.mark.model, pytest.mark.django_db(transaction=True)]

ANSWER = "Everolimus inhibits mTORC1 (PUBMED:10000002). Metformin did not cause lactic acidosis (PUBMED:10000001)."


def _asked(settings: Settings, verifier_model: Path) -> Question:
    settings.VERIMED = settings.VERIMED.replace(
        VERIMED_VERIFIER_MODEL=verifier_model
    )  # stored with the question's pipeline settings
    return admission.question_create(text="Does everolimus inhibit mTORC1?", enqueue=False)


def _answered_without_the_model(settings: Settings, verifier_model: Path) -> Question:
    """A question whose retrieval and generation are done, the way those stages store them."""
    question = _asked(settings, verifier_model)
    retrieve.question_retrieve(question_id=question.pk)
    Question.objects.filter(pk=question.pk).update(
        answer_text=ANSWER,
        context={"given": ["10000001", "10000002"]},
        status=Question.Status.GENERATING,
        models_used={"generator": "test-model"},
    )
    return question


def _shown_unavailable(question: Question, client: Client, says: str) -> None:
    """The page, its JSON and the API all say that verification is unavailable, and why."""
    page = client.get(f"/questions/{question.pk}/").content.decode()
    assert "Verification unavailable: " in page
    assert says in page
    assert 'id="verdict-legend" class="legend" aria-label="Verdict legend" hidden' in page
    assert "Traceback" not in page
    for url in (f"/questions/{question.pk}.json", f"/api/v1/questions/{question.pk}"):
        payload = client.get(url).json()
        assert payload["status"] == "done", url
        assert payload["verification_status"] == "unavailable", url
        assert says in payload["verification_error"], url
        assert payload["answer"] == question.answer_text, url
        assert payload["sentences"] == [], url


def test_a_missing_verifier_checkpoint_keeps_the_answer_and_marks_verification_unavailable(
    settings: Settings,
    llm_base_url: str,
    tmp_path: Path,
    indexed_articles: list[ArticleRecord],
    site_admin_client: Client,
) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_LLM_BASE_URL=llm_base_url)
    settings.VERIMED = settings.VERIMED.replace(VERIMED_LLM_MODEL=TEST_LLM_MODEL)
    settings.VERIMED = settings.VERIMED.replace(VERIMED_LLM_MAX_TOKENS=150)
    missing = tmp_path / "no-such-checkpoint"
    question = _asked(settings, missing)

    for task in (question_retrieve_task, question_generate_task, question_verify_task):
        assert task.apply(args=(question.pk,), throw=False).successful(), task.name

    question.refresh_from_db()
    assert question.status == Question.Status.DONE
    assert question.error == ""
    assert question.verification_status == Question.Verification.UNAVAILABLE
    assert question.verification_error.startswith("the verifier could not run (")
    assert str(missing) in question.verification_error
    assert "(PUBMED:10000002" in question.answer_text  # the answer and its citations are kept
    assert not question.sentences.exists()
    assert "verifier" not in question.models_used
    _shown_unavailable(question, site_admin_client, str(missing))


def test_a_corrupt_verifier_checkpoint_keeps_the_answer_and_marks_verification_unavailable(
    settings: Settings, tmp_path: Path, indexed_articles: list[ArticleRecord], site_admin_client: Client
) -> None:
    corrupt = tmp_path / "corrupt-checkpoint"
    corrupt.mkdir()
    (corrupt / "config.json").write_text('{"model_type": "bert", "hidden_size": ')  # cut off mid-write
    question = _answered_without_the_model(settings, corrupt)

    assert question_verify_task.apply(args=(question.pk,), throw=False).successful()

    question.refresh_from_db()
    assert question.status == Question.Status.DONE
    assert question.verification_status == Question.Verification.UNAVAILABLE
    assert question.verification_error.startswith("the verifier could not run (")
    assert question.answer_text == ANSWER
    _shown_unavailable(question, site_admin_client, "the verifier could not run")


def test_the_reason_is_escaped_on_the_page(
    settings: Settings, tmp_path: Path, indexed_articles: list[ArticleRecord], site_admin_client: Client
) -> None:
    question = _answered_without_the_model(settings, tmp_path / "missing")
    ending.question_verification_unavailable(question_id=question.pk, reason="<script>alert(1)</script> broke")

    page = site_admin_client.get(f"/questions/{question.pk}/").content.decode()

    assert "Verification unavailable: &lt;script&gt;alert(1)&lt;/script&gt; broke" in page
    assert "<script>alert(1)" not in page


def test_a_verified_answer_says_so_and_shows_the_legend(
    indexed_articles: list[ArticleRecord], site_admin_client: Client
) -> None:
    question = admission.question_create(text="Does everolimus inhibit mTORC1?", enqueue=False)
    Question.objects.filter(pk=question.pk).update(
        answer_text=ANSWER, context={"given": ["10000001", "10000002"]}, status=Question.Status.GENERATING
    )

    verify.question_verify(question_id=question.pk)

    payload = site_admin_client.get(f"/questions/{question.pk}.json").json()
    assert payload["verification_status"] == "verified"
    assert payload["verification_error"] == ""
    assert len(payload["sentences"]) == 2
    page = site_admin_client.get(f"/questions/{question.pk}/").content.decode()
    assert 'id="verification-unavailable" class="verification-unavailable" role="status" hidden>' in page
    assert 'aria-label="Verdict legend">' in page


def test_the_exports_keep_the_references_and_say_verification_is_unavailable(
    settings: Settings, tmp_path: Path, indexed_articles: list[ArticleRecord], site_admin_client: Client
) -> None:
    question = _answered_without_the_model(settings, tmp_path / "missing")
    ending.question_verification_unavailable(question_id=question.pk, reason="the verifier could not run (OSError)")

    markdown = site_admin_client.get(f"/questions/{question.pk}/export.md").content.decode()
    bibtex = site_admin_client.get(f"/questions/{question.pk}/references.bib").content.decode()

    assert "**Verification unavailable:** the verifier could not run (OSError)\n" in markdown
    assert "- Everolimus inhibits mTORC1. \\[1\\]\n" in markdown  # numbered, with no verdict after it
    assert "- Metformin did not cause lactic acidosis. \\[2\\]\n" in markdown
    assert "1. Everolimus inhibits mTORC1 signalling." in markdown
    assert "**Supported**" not in markdown
    assert "pmid10000002" in bibtex
    assert "pmid10000001" in bibtex


def test_verification_running_again_after_being_unavailable_marks_it_verified(
    settings: Settings, tmp_path: Path, indexed_articles: list[ArticleRecord]
) -> None:
    site_checkpoint = Path(settings.VERIMED.verification.verifier_model)
    question = _answered_without_the_model(settings, tmp_path / "missing")
    ending.question_verification_unavailable(question_id=question.pk, reason="the verifier could not run")
    # The site's own checkpoint again, as after an admin restored the folder, and the verify stage run again.
    pipeline = PipelineSettings.model_validate(question.settings)
    verification = pipeline.verification.model_copy(update={"verifier_model": str(site_checkpoint)})
    Question.objects.filter(pk=question.pk).update(
        settings=pipeline.model_copy(update={"verification": verification}).model_dump(mode="json"),
        status=Question.Status.GENERATING,
    )

    verify.question_verify(question_id=question.pk)

    question.refresh_from_db()
    assert question.verification_status == Question.Verification.VERIFIED
    assert question.verification_error == ""
    assert question.sentences.count() == 2


def test_a_question_that_failed_before_verification_has_no_verification_status(
    indexed_articles: list[ArticleRecord], site_admin_client: Client
) -> None:
    question = admission.question_create(text="Does everolimus inhibit mTORC1?", enqueue=False)
    ending.question_fail(question_id=question.pk, reason="The model server is unreachable.")

    payload = site_admin_client.get(f"/questions/{question.pk}.json").json()

    assert payload["verification_status"] is None
    assert payload["verification_error"] == ""
