"""CSRF on every form the site posts: refused without the token, accepted with the one the page's form carries."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.webapp.factories import answer_with_three_verdicts
from webapp.accounts.roles import ADMIN, RESEARCHER, REVIEWER
from webapp.corpus.models import IndexJob
from webapp.review.models import Flag
from webapp.review.services import flag_create

_TOKEN_FIELD = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


@dataclass(frozen=True)
class Form:
    role: str
    url: Callable[[dict[str, int]], str]
    data: dict[str, str]
    accepted: int  # the status once the token is there
    json: bool = False  # posted by the page's script as JSON, the token in X-CSRFToken


FORMS: dict[str, Form] = {
    "ask": Form(RESEARCHER, lambda ids: "/", {"question": "Is metformin safe?"}, 302),
    "cancel": Form(RESEARCHER, lambda ids: f"/questions/{ids['question']}/cancel", {}, 302),
    "share": Form(RESEARCHER, lambda ids: f"/questions/{ids['question']}/share", {}, 302),
    "unshare": Form(RESEARCHER, lambda ids: f"/questions/{ids['question']}/unshare", {}, 302),
    "flag create": Form(
        RESEARCHER,
        lambda ids: f"/review/questions/{ids['question']}/flags",
        {"sentence": "1", "reason": "wrong_verdict", "comment": "check it"},
        201,
        json=True,
    ),
    "review close": Form(
        REVIEWER, lambda ids: f"/review/flags/{ids['flag']}/", {"status": "dismissed", "note": "fine as it is"}, 302
    ),
    "index job new": Form(ADMIN, lambda ids: "/index/jobs/new", {}, 200),  # no action chosen: the page again
    "index job cancel": Form(ADMIN, lambda ids: f"/index/jobs/{ids['job']}/cancel", {}, 302),
    "sign out": Form(RESEARCHER, lambda ids: "/accounts/logout/", {}, 302),
}


@pytest.fixture
def ids(role_users: dict[str, User]) -> dict[str, int]:
    question = answer_with_three_verdicts(user=role_users[RESEARCHER])
    flag = flag_create(question=question, sentence_position=0, reason="unsupported", user=role_users[RESEARCHER])
    job = IndexJob.objects.create(kind=IndexJob.Kind.FILES, status=IndexJob.Status.RUNNING)
    return {"question": question.pk, "flag": flag.pk, "job": job.pk}


def _strict_client(user: User) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client


def _post(client: Client, form: Form, url: str, token: str | None) -> int:
    if form.json:
        headers = {"X-CSRFToken": token} if token else {}
        return client.post(url, form.data, content_type="application/json", headers=headers).status_code
    data = {**form.data, "csrfmiddlewaretoken": token} if token else form.data
    return client.post(url, data).status_code


@pytest.mark.parametrize("name", FORMS)
def test_a_post_without_the_csrf_token_is_refused(name: str, role_users: dict[str, User], ids: dict[str, int]) -> None:
    form = FORMS[name]
    client = _strict_client(role_users[form.role])
    client.get("/history/")  # the CSRF cookie is set: only the token in the form is missing
    assert _post(client, form, form.url(ids), token=None) == 403
    assert Flag.objects.count() == 1  # nothing was created or closed


@pytest.mark.parametrize("name", FORMS)
def test_a_post_with_the_token_the_page_carries_is_accepted(
    name: str, role_users: dict[str, User], ids: dict[str, int]
) -> None:
    form = FORMS[name]
    client = _strict_client(role_users[form.role])
    page = client.get(f"/questions/{ids['question']}/").content.decode()  # its forms carry {% csrf_token %}
    token = _TOKEN_FIELD.search(page)
    assert token is not None
    assert _post(client, form, form.url(ids), token=token.group(1)) == form.accepted
