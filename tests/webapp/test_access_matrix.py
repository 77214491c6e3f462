"""Who may open what: every route of the site and the API, tried as each role, against a table written out here.

The routes come from the URL resolver, so a route added without a line in EXPECTED fails
`test_every_route_has_an_expectation`: nobody adds a view without deciding who may use it. Django's own admin
pages are guarded by the admin site as a whole; only its index is tried here.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.webapp.factories import answer_with_three_verdicts, follow_up_draft, library_document
from webapp.accounts.roles import ADMIN, RESEARCHER, REVIEWER, user_assign_role
from webapp.corpus.models import IndexJob
from webapp.qa.sharing import question_share
from webapp.review.models import Flag
from webapp.review.services import flag_create

ANONYMOUS: Final = "anonymous"
ROLES_TRIED: Final = (ANONYMOUS, RESEARCHER, REVIEWER, ADMIN)
LOGIN: Final = "login"  # 302 to the site's sign-in page
ADMIN_LOGIN: Final = "admin-login"  # 302 to the Django admin's sign-in page
Outcome = int | str


@dataclass(frozen=True)
class Case:
    method: str
    expected: tuple[Outcome, Outcome, Outcome, Outcome]  # anonymous, researcher, reviewer, admin
    # "own": the researcher's question (or flag); "other": another researcher's.
    variant: str = "own"


def _get(*expected: Outcome, variant: str = "own") -> Case:
    return Case("GET", expected, variant)  # type: ignore[arg-type]


def _post(*expected: Outcome, variant: str = "own") -> Case:
    return Case("POST", expected, variant)  # type: ignore[arg-type]


PUBLIC_PAGE: Final = _get(200, 200, 200, 200)
RESEARCHER_PAGE: Final = _get(LOGIN, 200, 200, 200)
RESEARCHER_JSON: Final = _get(401, 200, 200, 200)
REVIEWER_PAGE: Final = _get(LOGIN, 403, 200, 200)
ADMIN_PAGE: Final = _get(LOGIN, 403, 403, 200)
API_READ: Final = _get(401, 200, 200, 200)
# Questions: the owner and reviewers/admins read them; another researcher is told it does not exist.
OWN_QUESTION: Final = _get(LOGIN, 200, 200, 200)
OTHERS_QUESTION: Final = _get(LOGIN, 404, 200, 200, variant="other")
# A library document: its owner's alone, even to reviewers and admins.
OWN_DOCUMENT: Final = [_get(LOGIN, 200, 404, 404), _get(LOGIN, 404, 404, 404, variant="other")]
# Only the owner shares or revokes a link.
OWNER_ONLY_POSTS: Final = [_post(LOGIN, 302, 404, 404), _post(LOGIN, 404, 404, 404, variant="other")]

# Route (as the resolver spells it) -> every method it allows, with its outcome per role.
EXPECTED: Final[dict[str, list[Case]]] = {
    "healthz": [PUBLIC_PAGE],
    "admin/": [_get(ADMIN_LOGIN, ADMIN_LOGIN, ADMIN_LOGIN, 200)],
    # Django's sign-in and password-change pages (no password reset: the site sends no mail).
    "accounts/login/": [PUBLIC_PAGE, _post(200, 200, 200, 200)],
    "accounts/logout/": [_post(LOGIN, LOGIN, LOGIN, LOGIN)],  # signs out, then shows the sign-in page
    "accounts/password_change/": [_get(LOGIN, 200, 200, 200), _post(LOGIN, 200, 200, 200)],
    "accounts/password_change/done/": [_get(LOGIN, 200, 200, 200)],
    # Each signed-in person's own API token, whatever their role.
    "accounts/api-token/": [_get(LOGIN, 200, 200, 200)],
    "accounts/api-token/new": [_post(LOGIN, 200, 200, 200)],
    "accounts/api-token/revoke": [_post(LOGIN, 302, 302, 302)],
    # The API: 401 without credentials, 403 without the role, 404 for what the caller may not see.
    "api/v1/auth/token": [_post(400, 400, 400, 400)],  # public: it takes a username and password
    "api/v1/auth/token/rotate": [_post(401, 200, 200, 200)],  # the caller's own token
    "api/v1/auth/token/revoke": [_post(401, 204, 204, 204)],
    "api/v1/questions": [API_READ, _post(401, 400, 400, 400)],
    "api/v1/questions/<int:question_id>": [API_READ, _get(401, 404, 200, 200, variant="other")],
    "api/v1/questions/<int:question_id>/cancel": [
        _post(401, 200, 403, 200),
        _post(401, 404, 403, 200, variant="other"),
    ],
    # Asking again: the owner or an admin; these questions are answered, so 400.
    "api/v1/questions/<int:question_id>/again": [
        _post(401, 400, 403, 400),
        _post(401, 404, 403, 400, variant="other"),
    ],
    # Only the person who asked watches; a reviewer or admin who may read it is told why not (403).
    "api/v1/questions/<int:question_id>/watch": [
        _post(401, 200, 403, 403),
        _post(401, 404, 403, 403, variant="other"),
    ],
    # The deep check: the person who asked, or an admin, runs (202) and stops it; a reviewer who may read it is told
    # why not (403). The reads come first, before any ran.
    "api/v1/questions/<int:question_id>/deep-check": [
        _get(401, 404, 404, 404),
        _post(401, 202, 403, 202),
        _post(401, 404, 403, 202, variant="other"),
    ],
    "api/v1/questions/<int:question_id>/deep-check/stop": [
        _post(401, 200, 403, 200),
        _post(401, 404, 403, 200, variant="other"),
    ],
    "api/v1/notifications": [API_READ],  # each caller's own
    "api/v1/notifications/read": [_post(401, 200, 200, 200)],
    "api/v1/articles/<str:pmid>": [API_READ],
    # A researcher's library is theirs alone: reviewers and admins are told a document does not exist, as a stranger
    # is (an empty upload is 400 in the API, a message on the page).
    "api/v1/documents": [API_READ, _post(401, 400, 400, 400)],
    "api/v1/documents/<int:document_id>": [_get(401, 200, 404, 404), _get(401, 404, 404, 404, variant="other")],
    "api/v1/flags": [API_READ, _post(401, 400, 400, 400)],
    "api/v1/flags/<int:flag_id>": [API_READ, _get(401, 404, 200, 200, variant="other")],
    "api/schema/": [PUBLIC_PAGE],  # the schema and its docs hold no data
    "api/docs/": [PUBLIC_PAGE],
    "api/redoc/": [PUBLIC_PAGE],
    # Review: reviewers and admins.
    "review/": [REVIEWER_PAGE],
    "review/questions/<int:question_id>/flags": [
        _post(LOGIN, 400, 400, 400),  # anyone who can read the answer may flag it (an empty body is 400)
        _post(LOGIN, 404, 400, 400, variant="other"),
    ],
    "review/flags/<int:flag_id>/": [REVIEWER_PAGE, _post(LOGIN, 403, 400, 400)],
    "review/export/claims.jsonl": [REVIEWER_PAGE],
    "review/export/corpus.jsonl": [REVIEWER_PAGE],
    "review/export/flags.jsonl": [REVIEWER_PAGE],
    # Index pages: admins only.
    "index/": [ADMIN_PAGE],
    "index/jobs/new": [ADMIN_PAGE, _post(LOGIN, 403, 403, 200)],
    "index/jobs/<int:job_id>/": [ADMIN_PAGE],
    "index/jobs/<int:job_id>.json": [_get(401, 403, 403, 200)],
    "index/jobs/<int:job_id>/cancel": [_post(LOGIN, 403, 403, 302)],
    # Asking and reading answers.
    "": [RESEARCHER_PAGE, _post(LOGIN, 400, 400, 400)],
    "questions/<int:question_id>/": [OWN_QUESTION, OTHERS_QUESTION],
    "questions/<int:question_id>.json": [_get(401, 200, 200, 200), _get(401, 404, 200, 200, variant="other")],
    # Reviewers read every question but only the owner or an admin stops one.
    "questions/<int:question_id>/cancel": [_post(LOGIN, 302, 404, 302), _post(LOGIN, 404, 404, 302, variant="other")],
    # Asking again takes a failed or stopped question: these are answered, so the owner and an admin get 400.
    "questions/<int:question_id>/again": [_post(LOGIN, 400, 404, 400), _post(LOGIN, 404, 404, 400, variant="other")],
    "articles/<str:pmid>.json": [RESEARCHER_JSON],
    "history/": [RESEARCHER_PAGE],
    # Follow-ups: only the person who asked, on their answered question (an empty follow-up or question is 400).
    "questions/<int:question_id>/follow-up": [
        _post(LOGIN, 400, 404, 404),
        _post(LOGIN, 404, 404, 404, variant="other"),
    ],
    "questions/<int:question_id>/follow-ups/<int:draft_id>.json": [
        _get(401, 200, 404, 404),
        _get(401, 404, 404, 404, variant="other"),
    ],
    "questions/<int:question_id>/follow-ups/<int:draft_id>/ask": [
        _post(LOGIN, 400, 404, 404),
        _post(LOGIN, 404, 404, 404, variant="other"),
    ],
    # Watched answers: only the owner watches, re-checks or regenerates; notifications are each person's own.
    "questions/<int:question_id>/watch": OWNER_ONLY_POSTS,
    "questions/<int:question_id>/unwatch": OWNER_ONLY_POSTS,
    "questions/<int:question_id>/recheck": OWNER_ONLY_POSTS,
    "questions/<int:question_id>/regenerate": OWNER_ONLY_POSTS,
    # The deep check: whoever may read the question reads it; the person who asked, or an admin, runs and stops it
    # (a reviewer is told why not: 403); only reviewers and admins flag its claims (an empty body is 400).
    "questions/<int:question_id>/deep-check": [
        _post(LOGIN, 302, 403, 302),
        _post(LOGIN, 404, 403, 302, variant="other"),
    ],
    "questions/<int:question_id>/deep-check/stop": [
        _post(LOGIN, 302, 403, 302),
        _post(LOGIN, 404, 403, 302, variant="other"),
    ],
    "questions/<int:question_id>/deep-check.json": [
        _get(401, 200, 200, 200),
        _get(401, 404, 200, 200, variant="other"),
    ],
    "questions/<int:question_id>/deep-check/flags": [
        _post(LOGIN, 403, 400, 400),
        _post(LOGIN, 404, 400, 400, variant="other"),
    ],
    "library/": [RESEARCHER_PAGE],
    "library/upload": [_post(LOGIN, 302, 302, 302)],
    "library/<int:document_id>/": OWN_DOCUMENT,
    "library/<int:document_id>/file": OWN_DOCUMENT,
    "library/<int:document_id>/view": OWN_DOCUMENT,
    # Indexing again before deleting: a deleted document is missing at once, to its owner too.
    "library/<int:document_id>/index": [_post(LOGIN, 302, 404, 404), _post(LOGIN, 404, 404, 404, variant="other")],
    "library/<int:document_id>/delete": [_post(LOGIN, 302, 404, 404), _post(LOGIN, 404, 404, 404, variant="other")],
    "notifications/": [RESEARCHER_PAGE],
    "notifications/read": [_post(LOGIN, 302, 302, 302)],
    "questions/<int:question_id>/share": OWNER_ONLY_POSTS,
    "questions/<int:question_id>/unshare": OWNER_ONLY_POSTS,
    "questions/<int:question_id>/export.md": [OWN_QUESTION, OTHERS_QUESTION],
    "questions/<int:question_id>/references.bib": [OWN_QUESTION, OTHERS_QUESTION],
    "questions/<int:question_id>/references.ris": [OWN_QUESTION, OTHERS_QUESTION],
    # A share link is read by any signed-in researcher, whoever owns the question.
    "shared/<slug:token>/": [RESEARCHER_PAGE],
    "shared/<slug:token>.json": [RESEARCHER_JSON],
    "shared/<slug:token>/export.md": [RESEARCHER_PAGE],
    "shared/<slug:token>/references.bib": [RESEARCHER_PAGE],
    "shared/<slug:token>/references.ris": [RESEARCHER_PAGE],
}


def _routes(patterns: list[URLPattern | URLResolver], prefix: str = "") -> Iterator[str]:
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            yield from _routes(pattern.url_patterns, route)
        else:
            yield route


def site_routes() -> set[str]:
    """Every route the site serves, less the Django admin's inner pages (its index stays) and static files."""
    return {
        route
        for route in _routes(get_resolver().url_patterns)
        if not (route.startswith("admin/") and route != "admin/") and not route.startswith("static/")
    }


def test_every_route_has_an_expectation() -> None:
    routes = site_routes()
    missing = sorted(routes - EXPECTED.keys())
    assert not missing, f"routes with no line in EXPECTED (decide who may use them): {missing}"
    assert not sorted(EXPECTED.keys() - routes), "EXPECTED names routes that no longer exist"


@dataclass(frozen=True)
class Rows:
    params: dict[str, dict[str, str]]  # variant -> path parameter -> value


@pytest.fixture
def rows(role_users: dict[str, User]) -> Rows:
    other = User.objects.create_user("other-researcher", password="another-long-password")
    user_assign_role(user=other, role=RESEARCHER)
    own = answer_with_three_verdicts(user=role_users[RESEARCHER], text="Is metformin safe?")
    theirs = answer_with_three_verdicts(user=other, text="Does everolimus inhibit mTORC1?")
    own_flag = flag_create(question=own, sentence_position=0, reason="unsupported", user=role_users[RESEARCHER])
    their_flag = flag_create(question=theirs, sentence_position=0, reason="unsupported", user=other)
    job = IndexJob.objects.create(kind=IndexJob.Kind.FILES, status=IndexJob.Status.RUNNING)
    token = question_share(question_id=theirs.pk).share_token or ""
    common = {"pmid": "111", "job_id": str(job.pk), "token": token}
    own_draft, their_draft = follow_up_draft(parent=own), follow_up_draft(parent=theirs)
    own_document, their_document = library_document(owner=role_users[RESEARCHER]), library_document(owner=other)
    return Rows(
        params={
            "own": {
                **common,
                "question_id": str(own.pk),
                "flag_id": str(own_flag.pk),
                "draft_id": str(own_draft.pk),
                "document_id": str(own_document.pk),
            },
            "other": {
                **common,
                "question_id": str(theirs.pk),
                "flag_id": str(their_flag.pk),
                "draft_id": str(their_draft.pk),
                "document_id": str(their_document.pk),
            },
        }
    )


def _url(route: str, params: dict[str, str]) -> str:
    path = route
    for converter in ("int", "str", "slug", ""):
        for name, value in params.items():
            path = path.replace(f"<{converter}:{name}>" if converter else f"<{name}>", value)
    return "/" + path


def _client(role: str, users: dict[str, User], *, api_token: bool) -> Client:
    client: Client = APIClient() if api_token else Client()
    if role == ANONYMOUS:
        return client
    if api_token:
        token, _ = Token.objects.get_or_create(user=users[role])
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")  # type: ignore[attr-defined]
    else:
        client.force_login(users[role])
    return client


def _outcome(response_status: int, location: str) -> Outcome:
    if response_status == 302 and location.startswith("/accounts/login/"):
        return LOGIN
    if response_status == 302 and location.startswith("/admin/login/"):
        return ADMIN_LOGIN
    return response_status


def _mismatches(role: str, users: dict[str, User], rows: Rows, *, api_token: bool) -> list[str]:
    index = ROLES_TRIED.index(role)
    found = []
    # Reads first, so that writes (a revoked share link, a cancelled job) cannot change what a read sees.
    cases = [(route, case) for route, cases in EXPECTED.items() for case in cases]
    cases.sort(key=lambda item: item[1].method != "GET")
    for route, case in cases:
        if api_token and not route.startswith("api/v1/"):
            continue
        url = _url(route, rows.params[case.variant])
        client = _client(role, users, api_token=api_token)  # a fresh client: signing out affects only itself
        response = client.get(url) if case.method == "GET" else client.post(url)
        got = _outcome(response.status_code, response.get("Location", ""))
        if got != case.expected[index]:
            found.append(f"{case.method} {url} ({case.variant}) as {role}: expected {case.expected[index]}, got {got}")
    return found


@pytest.mark.parametrize("role", ROLES_TRIED)
def test_every_route_answers_each_role_as_the_table_says(role: str, role_users: dict[str, User], rows: Rows) -> None:
    assert _mismatches(role, role_users, rows, api_token=False) == []


@pytest.mark.parametrize("role", ROLES_TRIED)
def test_every_api_route_answers_token_callers_as_the_table_says(
    role: str, role_users: dict[str, User], rows: Rows
) -> None:
    assert _mismatches(role, role_users, rows, api_token=True) == []


def test_the_matrix_sees_a_researcher_refused_from_review_and_index(role_users: dict[str, User], rows: Rows) -> None:
    """The table is not vacuous: a researcher really is turned away with 403 and a stranger's question is 404."""
    client = _client(RESEARCHER, role_users, api_token=False)
    assert client.get("/review/").status_code == 403
    assert client.get("/index/").status_code == 403
    assert client.get(_url("questions/<int:question_id>/", rows.params["other"])).status_code == 404
    assert Flag.objects.count() == 2
