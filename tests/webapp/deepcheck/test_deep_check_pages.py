"""The deep check on the answer page: who sees its button, its page endpoints (start, stop, the JSON the page polls)
and a reviewer's flag on one of its claims; everything from the model is text, never markup."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.webapp.factories import HOSTILE_CLAIM, answer_with_three_verdicts, deep_check_stored
from webapp.deepcheck.models import ClaimFlag, DeepCheck
from webapp.qa.models import Question
from webapp.qa.sharing import question_share
from webapp.review.exports import flag_training_export
from webapp.review.models import Flag
from webapp.review.services import flag_close

pytestmark = pytest.mark.django_db


@pytest.fixture
def answer(role_users: dict[str, User]) -> Question:
    return answer_with_three_verdicts(user=role_users["researcher"])


def _flag(client: Client, question: Question, body: object) -> tuple[int, dict[str, object]]:
    response = client.post(
        f"/questions/{question.pk}/deep-check/flags", data=json.dumps(body), content_type="application/json"
    )
    return response.status_code, response.json()


def test_the_owner_and_reviewers_get_the_deep_check_section_and_a_shared_page_does_not(
    answer: Question, researcher_client: Client, reviewer_client: Client
) -> None:
    for client in (researcher_client, reviewer_client):
        page = client.get(f"/questions/{answer.pk}/").content.decode()
        assert 'id="deep-check"' in page
        assert "/static/deep-check.js" in page
    # Only the person who asked (or an admin) starts it; reviewers read it.
    owners = researcher_client.get(f"/questions/{answer.pk}/").content.decode()
    assert 'id="deep-check-button"' in owners
    assert f'action="/questions/{answer.pk}/deep-check"' in owners
    assert 'id="deep-check-button"' not in reviewer_client.get(f"/questions/{answer.pk}/").content.decode()
    # Only reviewers get the flag reasons the claim flags offer.
    assert "data-flag-reasons=" in reviewer_client.get(f"/questions/{answer.pk}/").content.decode()
    assert "data-flag-reasons=" not in researcher_client.get(f"/questions/{answer.pk}/").content.decode()

    token = question_share(question_id=answer.pk).share_token
    assert 'id="deep-check"' not in reviewer_client.get(f"/shared/{token}/").content.decode()


def test_the_section_waits_hidden_until_the_answer_is_done(answer: Question, researcher_client: Client) -> None:
    Question.objects.filter(pk=answer.pk).update(status=Question.Status.GENERATING)

    page = researcher_client.get(f"/questions/{answer.pk}/").content.decode()

    section = page[page.index('<section id="deep-check"') :]
    assert section[: section.index(">")].endswith(" hidden")


def test_start_stop_and_poll_from_the_page(answer: Question, researcher_client: Client) -> None:
    assert researcher_client.get(f"/questions/{answer.pk}/deep-check.json").json()["status"] is None

    started = researcher_client.post(f"/questions/{answer.pk}/deep-check", HTTP_ACCEPT="application/json")
    assert started.status_code == 202
    assert started.json()["status"] == "queued"

    stopped = researcher_client.post(f"/questions/{answer.pk}/deep-check/stop", HTTP_ACCEPT="application/json")
    assert stopped.json()["status"] == "stopped"
    # Without JavaScript the forms post and land back on the answer.
    again = researcher_client.post(f"/questions/{answer.pk}/deep-check")
    assert again.status_code == 302
    assert again["Location"] == f"/questions/{answer.pk}/"


def test_an_unfinished_answer_is_refused_with_the_reason(answer: Question, researcher_client: Client) -> None:
    Question.objects.filter(pk=answer.pk).update(status=Question.Status.VERIFYING)

    response = researcher_client.post(f"/questions/{answer.pk}/deep-check", HTTP_ACCEPT="application/json")

    assert response.status_code == 409
    assert "answered" in response.json()["error"]
    assert not DeepCheck.objects.exists()


def test_the_json_carries_the_tree_with_model_text_as_data(answer: Question, researcher_client: Client) -> None:
    deep_check_stored(question=answer)

    payload = researcher_client.get(f"/questions/{answer.pk}/deep-check.json").json()

    assert payload["status"] == "done"
    assert payload["tree"]["sentences"][1]["claims"][1]["text"] == HOSTILE_CLAIM
    assert payload["flagged"] == []


def test_a_reviewer_flags_a_claim_into_the_review_queue(
    answer: Question, reviewer_client: Client, role_users: dict[str, User]
) -> None:
    deep_check_stored(question=answer)

    status, body = _flag(reviewer_client, answer, {"sentence": 1, "claim": 1, "reason": "wrong_verdict",
                                                   "comment": "The abstract says it inhibits."})  # fmt: skip

    assert status == 201
    flag = Flag.objects.get(pk=body["id"])
    assert (flag.question, flag.sentence.position, flag.reason) == (answer, 1, "wrong_verdict")
    assert flag.flagged_by == role_users["reviewer"]
    assert flag.comment.startswith(f"Deep-check claim 2 (CONTRADICT): {HOSTILE_CLAIM}")
    assert flag.comment.endswith("The abstract says it inhibits.")
    claim = ClaimFlag.objects.get(flag=flag)
    assert (claim.sentence_position, claim.claim_index, claim.claim_text) == (1, 1, HOSTILE_CLAIM)
    assert reviewer_client.get(f"/questions/{answer.pk}/deep-check.json").json()["flagged"] == [[1, 1]]
    # The review queue and the flag's page show the claim, its markup as text.
    for page in (reviewer_client.get("/review/"), reviewer_client.get(f"/review/flags/{flag.pk}/")):
        text = page.content.decode()
        assert "Deep-check claim 2 (CONTRADICT): Everolimus &lt;b onmouseover=" in text
        assert "<b onmouseover" not in text


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({"sentence": 1, "claim": 5, "reason": "other"}, "has no claim 5"),
        ({"sentence": 7, "claim": 0, "reason": "other"}, "no sentence 7"),
        ({"sentence": 1, "reason": "other"}, "say which claim"),
        ({"sentence": 1, "claim": 0, "reason": "bored"}, "reason must be one of"),
        ({"sentence": 1, "claim": 0, "reason": "other", "comment": "x" * 3001}, "limited to"),
    ],
)
def test_a_claim_flag_that_names_nothing_real_is_refused(
    answer: Question, reviewer_client: Client, body: dict[str, object], error: str
) -> None:
    deep_check_stored(question=answer)

    status, response = _flag(reviewer_client, answer, body)

    assert status == 400
    assert error in str(response["error"])
    assert not Flag.objects.exists()


def test_only_reviewers_flag_claims_and_only_of_a_finished_check(
    answer: Question, researcher_client: Client, reviewer_client: Client
) -> None:
    body = {"sentence": 0, "claim": 0, "reason": "unsupported"}
    assert _flag(reviewer_client, answer, body) == (400, {"error": "this question has no deep check"})
    check = deep_check_stored(question=answer, status=DeepCheck.Status.RUNNING)
    assert _flag(reviewer_client, answer, body)[1]["error"] == "the deep check has no finished result to flag"

    DeepCheck.objects.filter(pk=check.pk).update(status=DeepCheck.Status.DONE)
    assert _flag(researcher_client, answer, body)[0] == 403  # the owner reads the tree but does not flag it
    assert _flag(reviewer_client, answer, body)[0] == 201


def test_a_closed_claim_flag_is_exported_as_training_data_with_the_claims_text(
    answer: Question, reviewer_client: Client, role_users: dict[str, User]
) -> None:
    deep_check_stored(question=answer)
    status, body = _flag(reviewer_client, answer, {"sentence": 1, "claim": 1, "reason": "wrong_verdict"})
    assert status == 201
    flag_close(flag_id=int(str(body["id"])), status="resolved", reviewer_label="SUPPORT", user=role_users["reviewer"])

    claims = flag_training_export().claims

    assert {claim["claim"] for claim in claims} == {HOSTILE_CLAIM}  # the claim, not the sentence it came from
