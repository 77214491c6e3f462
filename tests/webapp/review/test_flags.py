"""Flagging a sentence from the answer page: who may, what is checked, what is stored and shown."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.webapp.factories import answer_with_three_verdicts
from webapp.accounts.roles import RESEARCHER, REVIEWER
from webapp.qa.models import Question
from webapp.qa.sharing import question_share
from webapp.review.models import Flag

pytestmark = pytest.mark.django_db


@pytest.fixture
def own_question(role_users: dict[str, User]) -> Question:
    return answer_with_three_verdicts(user=role_users[RESEARCHER])


def _post_json(client: Client, question_id: int, body: dict[str, object]) -> tuple[int, dict[str, Any]]:
    response = client.post(
        f"/review/questions/{question_id}/flags",
        data=json.dumps(body),
        content_type="application/json",
        headers={"Accept": "application/json"},
    )
    return response.status_code, response.json()


def test_a_researcher_flags_a_sentence_of_their_question(
    researcher_client: Client, own_question: Question, role_users: dict[str, User]
) -> None:
    status, body = _post_json(
        researcher_client,
        own_question.pk,
        {"sentence": 1, "reason": "wrong_verdict", "pmid": "222", "comment": "  The abstract says it inhibits.  "},
    )
    assert status == 201
    assert body["message"] == "Flag sent to the review queue"
    assert body["sentence"] == 1
    flag = Flag.objects.get(pk=body["id"])
    assert flag.question == own_question
    assert flag.sentence.position == 1
    assert flag.pmid == "222"
    assert flag.reason == Flag.Reason.WRONG_VERDICT
    assert flag.comment == "The abstract says it inhibits."
    assert flag.verifier_verdict == "CONTRADICT", "the verdict shown when the flag was raised is kept"
    assert flag.flagged_by == role_users[RESEARCHER]
    assert flag.status == Flag.Status.OPEN


def test_a_plain_form_post_flags_too(researcher_client: Client, own_question: Question) -> None:
    response = researcher_client.post(
        f"/review/questions/{own_question.pk}/flags", {"sentence": "0", "reason": "unsupported"}
    )
    assert response.status_code == 201
    flag = Flag.objects.get()
    assert (flag.sentence.position, flag.pmid, flag.comment) == (0, "", "")


def test_someone_elses_question_cannot_be_flagged(researcher_client: Client) -> None:
    other = User.objects.create_user("someone-else")
    question = answer_with_three_verdicts(user=other)
    status, body = _post_json(researcher_client, question.pk, {"sentence": 0, "reason": "unsupported"})
    assert status == 404
    assert body == {"error": "no such question"}
    assert not Flag.objects.exists()


def test_a_reviewer_may_flag_any_question(reviewer_client: Client, role_users: dict[str, User]) -> None:
    question = answer_with_three_verdicts(user=role_users[RESEARCHER])
    status, _ = _post_json(reviewer_client, question.pk, {"sentence": 2, "reason": "wrong_citation"})
    assert status == 201
    assert Flag.objects.get().flagged_by == role_users[REVIEWER]


def test_an_unknown_question_is_404(researcher_client: Client) -> None:
    status, _ = _post_json(researcher_client, 4242, {"sentence": 0, "reason": "unsupported"})
    assert status == 404


def test_a_bad_reason_is_refused_with_a_message(researcher_client: Client, own_question: Question) -> None:
    status, body = _post_json(researcher_client, own_question.pk, {"sentence": 0, "reason": "boring"})
    assert status == 400
    assert body["error"] == "reason must be one of unsupported, wrong_verdict, wrong_citation, other"
    assert not Flag.objects.exists()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"sentence": 7, "reason": "other"}, "the answer has no sentence 7"),
        ({"sentence": 0, "reason": "other", "pmid": "222"}, "sentence 0 does not cite PMID 222"),
        ({"sentence": "first", "reason": "other"}, "sentence: Enter a whole number."),
        ({"reason": "other"}, "sentence: say which sentence to flag"),
        ({"sentence": 0, "reason": "other", "comment": "x" * 4001}, "comments are limited to 4,000 characters"),
    ],
)
def test_malformed_flags_are_refused_with_a_message(
    researcher_client: Client, own_question: Question, body: dict[str, object], message: str
) -> None:
    status, answer = _post_json(researcher_client, own_question.pk, body)
    assert status == 400
    assert answer["error"] == message
    assert not Flag.objects.exists()


def test_a_body_that_is_not_a_json_object_is_refused(researcher_client: Client, own_question: Question) -> None:
    response = researcher_client.post(
        f"/review/questions/{own_question.pk}/flags", data="[1, 2]", content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["error"] == "the body must be a JSON object"


def test_anonymous_callers_get_401_as_json_or_the_sign_in_page(client: Client, own_question: Question) -> None:
    url = f"/review/questions/{own_question.pk}/flags"
    as_json = client.post(url, {"sentence": 0, "reason": "other"}, headers={"Accept": "application/json"})
    assert as_json.status_code == 401
    as_page = client.post(url, {"sentence": 0, "reason": "other"})
    assert as_page.status_code == 302
    assert as_page["Location"].startswith("/accounts/login/")
    assert not Flag.objects.exists()


def test_flagging_needs_a_post(researcher_client: Client, own_question: Question) -> None:
    assert researcher_client.get(f"/review/questions/{own_question.pk}/flags").status_code == 405


def test_the_dialogs_csrf_token_is_what_lets_the_post_through(
    own_question: Question, role_users: dict[str, User]
) -> None:
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(role_users[RESEARCHER])
    url = f"/review/questions/{own_question.pk}/flags"
    body = json.dumps({"sentence": 0, "reason": "unsupported"})
    assert browser.post(url, data=body, content_type="application/json").status_code == 403
    page = browser.get(f"/questions/{own_question.pk}/").content.decode()
    dialog = page[page.index('<dialog id="flag-dialog"') :]
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', dialog)
    assert token is not None
    response = browser.post(url, data=body, content_type="application/json", headers={"X-CSRFToken": token.group(1)})
    assert response.status_code == 201


def test_the_question_page_offers_the_flag_dialog_and_marks_flagged_sentences(
    researcher_client: Client, own_question: Question
) -> None:
    page = researcher_client.get(f"/questions/{own_question.pk}/").content.decode()
    assert 'id="flag-dialog"' in page
    assert 'data-flagged=""' in page
    assert "review.js" in page
    for reason in Flag.Reason.values:
        assert f'value="{reason}"' in page
    assert f'action="/review/questions/{own_question.pk}/flags"' in page
    assert 'aria-live="polite"' in page

    _post_json(researcher_client, own_question.pk, {"sentence": 2, "reason": "wrong_citation"})
    _post_json(researcher_client, own_question.pk, {"sentence": 0, "reason": "other"})
    page = researcher_client.get(f"/questions/{own_question.pk}/").content.decode()
    assert 'data-flagged="0,2"' in page


def test_a_closed_flag_no_longer_marks_its_sentence(
    researcher_client: Client, own_question: Question, role_users: dict[str, User]
) -> None:
    _, body = _post_json(researcher_client, own_question.pk, {"sentence": 1, "reason": "other"})
    Flag.objects.filter(pk=body["id"]).update(status=Flag.Status.DISMISSED)
    page = researcher_client.get(f"/questions/{own_question.pk}/").content.decode()
    assert 'data-flagged=""' in page


def test_a_shared_read_only_view_offers_no_flagging(researcher_client: Client, own_question: Question) -> None:
    token = question_share(question_id=own_question.pk).share_token
    page = researcher_client.get(f"/shared/{token}/")
    assert page.status_code == 200
    assert 'id="flag-dialog"' not in page.content.decode()
