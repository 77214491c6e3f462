"""The Content-Security-Policy header on every kind of response, and pages that need nothing it forbids: no inline
script, no event-handler attribute, no inline style, no `javascript:` link."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.webapp.factories import answer_with_references
from webapp.accounts.roles import RESEARCHER
from webapp.corpus.models import IndexJob
from webapp.qa.sharing import question_share
from webapp.review.services import flag_create

SITE_POLICY = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'"],
    "img-src": ["'self'", "data:"],
    "connect-src": ["'self'"],
    "frame-ancestors": ["'none'"],
    "base-uri": ["'self'"],
    "form-action": ["'self'"],
    "object-src": ["'none'"],
}


def _policy(header: str) -> dict[str, list[str]]:
    directives = (part.split() for part in header.split(";") if part.strip())
    return {name: values for name, *values in directives}


class _InlineFinder(HTMLParser):
    """Collects everything a strict CSP would block or that runs script from markup."""

    def __init__(self) -> None:
        super().__init__()
        self.problems: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if tag == "script" and "src" not in named:
            self._in_script = True
            self.problems.append("<script> without src")
        if tag == "style":
            self.problems.append("<style> element")
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append(f"<{tag} {name}=>")
            if name == "style":
                self.problems.append(f"<{tag} style=>")
            if name in ("href", "src", "action", "formaction") and (value or "").strip().lower().startswith(
                "javascript:"
            ):
                self.problems.append(f"<{tag} {name}=javascript:>")

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.problems.append("inline script body")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False


def _inline_problems(html: str) -> list[str]:
    finder = _InlineFinder()
    finder.feed(html)
    return finder.problems


@pytest.fixture
def pages(role_users: dict[str, User]) -> list[str]:
    question = answer_with_references(user=role_users[RESEARCHER])
    flag = flag_create(question=question, sentence_position=0, reason="unsupported", user=role_users[RESEARCHER])
    job = IndexJob.objects.create(kind=IndexJob.Kind.FILES, status=IndexJob.Status.RUNNING)
    token = question_share(question_id=question.pk).share_token
    return [
        "/",
        "/history/",
        f"/questions/{question.pk}/",
        f"/shared/{token}/",
        "/review/",
        f"/review/flags/{flag.pk}/",
        "/index/",
        "/index/jobs/new",
        f"/index/jobs/{job.pk}/",
        "/accounts/password_change/",
        "/no-such-page/",
        "/admin/",
        "/admin/qa/question/",
    ]


def test_every_site_page_carries_the_policy_and_needs_no_inline_code(
    site_admin_client: Client, pages: list[str]
) -> None:
    for path in pages:
        response = site_admin_client.get(path)
        assert response.status_code in (200, 404), path
        assert _policy(response["Content-Security-Policy"]) == SITE_POLICY, path
        assert _inline_problems(response.content.decode()) == [], path


def test_the_sign_in_page_and_error_pages_carry_the_policy(client: Client, researcher_client: Client) -> None:
    for response in (client.get("/accounts/login/"), researcher_client.get("/review/")):
        assert _policy(response["Content-Security-Policy"]) == SITE_POLICY
        assert _inline_problems(response.content.decode()) == []


def test_json_and_api_responses_carry_the_policy(researcher_client: Client, pages: list[str]) -> None:
    for path in ("/articles/10000001.json", "/api/v1/questions", "/api/schema/", "/healthz"):
        response = researcher_client.get(path)
        assert response.status_code == 200, path
        assert _policy(response["Content-Security-Policy"]) == SITE_POLICY, path


@pytest.mark.parametrize("path", ["/api/docs/", "/api/redoc/"])
def test_the_api_docs_relax_only_inline_styles_and_run_no_inline_script(client: Client, path: str) -> None:
    response = client.get(path)
    policy = _policy(response["Content-Security-Policy"])
    assert policy["script-src"] == ["'self'"]
    assert policy["style-src"] == ["'self'", "'unsafe-inline'"]
    assert {name: values for name, values in policy.items() if name not in ("style-src", "worker-src")} == {
        name: values for name, values in SITE_POLICY.items() if name != "style-src"
    }
    scripts = [problem for problem in _inline_problems(response.content.decode()) if "script" in problem]
    assert scripts == []


def test_swagger_ui_start_up_script_is_served_from_the_site(client: Client) -> None:
    response = client.get("/api/docs/", {"script": ""})
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/javascript")
    assert "SwaggerUIBundle" in response.content.decode()
