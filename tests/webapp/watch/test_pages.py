"""The answer page's watch controls and "Since you asked" section, the notifications page and the header's unread
count; who may do what (only the owner watches; a shared read-only link never shows the controls)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.test import Client, RequestFactory
from django.utils import timezone

import webapp.watch.tasks  # noqa: F401  (registers the task the services name)
from tests.webapp.factories import HOSTILE_TITLE, notification_stored, recheck_stored
from tests.webapp.watch.conftest import FakeSearch
from webapp.celery import app
from webapp.qa.models import ModelAction, Question
from webapp.qa.pipeline import PipelineSettings
from webapp.qa.sharing import question_share
from webapp.watch.context import notifications as notifications_context
from webapp.watch.models import Notification, Recheck, Watch

pytestmark = pytest.mark.django_db

Capture = Callable[..., Any]


@pytest.fixture
def reviewer(role_users: dict[str, User]) -> User:
    return role_users["reviewer"]


def _page(client: Client, question: Question) -> str:
    response = client.get(f"/questions/{question.pk}/")
    assert response.status_code == 200
    return response.content.decode()


def test_the_owner_watches_and_unwatches_from_the_answer_page(
    researcher_client: Client, answered: Question, owner: User
) -> None:
    assert 'id="watch-button"' in _page(researcher_client, answered)

    response = researcher_client.post(f"/questions/{answered.pk}/watch")

    assert response.status_code == 302
    assert response["Location"] == f"/questions/{answered.pk}/"
    assert Watch.objects.filter(user=owner, question=answered).exists()
    html = _page(researcher_client, answered)
    assert 'id="unwatch-button"' in html
    assert 'id="recheck-button"' in html
    assert 'id="regenerate-button"' in html

    researcher_client.post(f"/questions/{answered.pk}/unwatch")
    assert not Watch.objects.exists()


def test_someone_else_sees_no_controls_and_cannot_watch(
    reviewer_client: Client, researcher_client: Client, answered: Question, reviewer: User
) -> None:
    html = _page(reviewer_client, answered)  # reviewers read every answer
    assert 'id="watch-controls"' not in html

    for action in ("watch", "unwatch", "recheck", "regenerate"):
        assert reviewer_client.post(f"/questions/{answered.pk}/{action}").status_code == 404
    assert not Watch.objects.exists()


def test_watching_is_a_post_and_needs_signing_in(client: Client, researcher_client: Client, answered: Question) -> None:
    assert researcher_client.get(f"/questions/{answered.pk}/watch").status_code == 405
    response = client.post(f"/questions/{answered.pk}/watch")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")
    assert not Watch.objects.exists()


def test_an_answer_still_being_written_cannot_be_watched_yet(researcher_client: Client, answered: Question) -> None:
    Question.objects.filter(pk=answered.pk).update(status=Question.Status.GENERATING)

    assert 'id="watch-button"' not in _page(researcher_client, answered)
    researcher_client.post(f"/questions/{answered.pk}/watch")
    assert not Watch.objects.exists()


def test_since_you_asked_lists_each_dated_change_escaped_with_pubmed_links(
    researcher_client: Client, watched: Question
) -> None:
    recheck_stored(question=watched, at=timezone.now() - timedelta(days=2), key="job-1")
    latest = recheck_stored(question=watched, changes=[], key="job-2")

    html = _page(researcher_client, watched)

    assert "Since you asked" in html
    assert f'Last re-checked <time datetime="{latest.at.isoformat()}">' in html
    assert "</time>: nothing changed." in html
    assert html.count('<li class="recheck">') == 1, "a re-check that found nothing is not listed"
    assert "PMID 10000001 retracted; 1 verdict changed; 1 new contradicting abstract." in html
    assert "is now <strong>retracted</strong>" in html
    assert "Retracted: a paper. J Test. 2023." in html
    assert 'href="https://pubmed.ncbi.nlm.nih.gov/10000001/"' in html
    assert "No evidence → <strong>Contradicted</strong>" in html
    assert "<strong>contradicts</strong> sentence 1" in html
    assert HOSTILE_TITLE not in html
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html
    assert "Everolimus inhibits &lt;b&gt;mTORC1&lt;/b&gt;." in html
    assert html.index('id="since-you-asked"') < html.index('id="answer-heading"'), "it opens the answer"


def test_a_shared_link_shows_the_rechecks_but_never_the_controls(
    researcher_client: Client, reviewer_client: Client, watched: Question
) -> None:
    recheck_stored(question=watched)
    token = question_share(question_id=watched.pk).share_token

    for client in (researcher_client, reviewer_client):  # the owner too, through the link
        html = client.get(f"/shared/{token}/").content.decode()
        assert 'id="watch-controls"' not in html
        assert "Since this was asked" in html
        assert "PMID 10000001 retracted" in html


def test_an_answer_never_rechecked_has_no_section(researcher_client: Client, watched: Question) -> None:
    assert 'id="since-you-asked"' not in _page(researcher_client, watched)


@pytest.fixture
def eager_tasks() -> Iterator[None]:
    previous = app.conf.task_always_eager, app.conf.task_eager_propagates
    app.conf.task_always_eager, app.conf.task_eager_propagates = True, True
    yield
    app.conf.task_always_eager, app.conf.task_eager_propagates = previous


def test_recheck_now_rechecks_a_watched_answer_on_request(
    researcher_client: Client,
    watched: Question,
    search: FakeSearch,
    eager_tasks: None,
    django_capture_on_commit_callbacks: Capture,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = researcher_client.post(f"/questions/{watched.pk}/recheck")

    assert response.status_code == 302
    recheck = Recheck.objects.get()
    assert (recheck.trigger, recheck.summary) == ("manual", "Nothing changed.")
    assert recheck.key.startswith("manual-")
    assert "Re-checking the answer" in _page(researcher_client, watched)


# Committed for real (not in a test's transaction): the re-check is published as its admission commits, before the
# page answers, as in production.
@pytest.mark.django_db(transaction=True)
def test_recheck_now_with_the_broker_down_says_so_with_a_503_and_loses_nothing(
    broker_down: None, researcher_client: Client, watched: Question, owner: User
) -> None:
    response = researcher_client.post(f"/questions/{watched.pk}/recheck")

    assert response.status_code == 503, "not a 500"
    assert response["Retry-After"] == "60"
    html = response.content.decode()
    assert "The re-check was not started" in html
    assert "The task queue is unreachable, so the answer was not re-checked. Please try again shortly." in html
    assert f'href="/questions/{watched.pk}/"' in html
    assert Watch.objects.filter(user=owner, question=watched).exists(), "the watch stays"
    assert not Recheck.objects.exists()
    assert not ModelAction.objects.exists(), "a click that started nothing is not counted against the hourly limit"
    assert "Re-checking the answer" not in _page(researcher_client, watched)


def test_regenerate_asks_the_same_text_with_the_same_search_settings_as_a_new_question(
    researcher_client: Client, answered: Question, owner: User
) -> None:
    stored = PipelineSettings.model_validate(answered.settings)
    search = stored.model_copy(update={"retrieval": stored.retrieval.model_copy(update={"top_k": 7})})
    Question.objects.filter(pk=answered.pk).update(settings=search.model_dump(mode="json"))

    response = researcher_client.post(f"/questions/{answered.pk}/regenerate")

    fresh = Question.objects.exclude(pk=answered.pk).get()
    assert response["Location"] == f"/questions/{fresh.pk}/"
    assert (fresh.text, fresh.user, fresh.status) == (answered.text, owner, Question.Status.QUEUED)
    settings = PipelineSettings.model_validate(fresh.settings)
    assert (settings.retrieval, settings.filters) == (search.retrieval, search.filters)
    assert Question.objects.get(pk=answered.pk).answer_text == answered.answer_text, "the old answer stays"


def test_the_notifications_page_lists_your_own_newest_first_and_marks_them_read(
    researcher_client: Client, watched: Question, owner: User, reviewer: User
) -> None:
    older = notification_stored(user=owner, recheck=recheck_stored(question=watched, key="job-1"))
    newer = notification_stored(
        user=owner, recheck=recheck_stored(question=watched, key="job-2", summary="PMID 11000001 corrected.")
    )
    notification_stored(user=reviewer, recheck=recheck_stored(question=watched, key="job-3", summary="Not yours."))

    html = researcher_client.get("/notifications/").content.decode()

    assert html.index("PMID 11000001 corrected.") < html.index("PMID 10000001 retracted")
    assert "Not yours." not in html
    assert html.count('class="unread-badge"') == 2
    assert f'href="/questions/{watched.pk}/#since-you-asked"' in html
    assert '<span class="unread-count" id="unread-count" aria-label="2 unread">2</span>' in html

    researcher_client.post("/notifications/read", {"notification": str(older.pk)})
    assert Notification.objects.get(pk=older.pk).read_at is not None
    assert Notification.objects.get(pk=newer.pk).read_at is None

    response = researcher_client.post("/notifications/read")
    assert response["Location"] == "/notifications/"
    assert not Notification.objects.filter(user=owner, read_at__isnull=True).exists()
    assert Notification.objects.filter(user=reviewer, read_at__isnull=True).count() == 1, "only your own"
    html = researcher_client.get("/notifications/").content.decode()
    assert 'id="unread-count"' not in html
    assert 'id="notifications-link"' in html


def test_the_headers_unread_count_is_one_count_query_and_none_for_visitors(
    owner: User, django_assert_num_queries: Capture
) -> None:
    request = RequestFactory().get("/")
    request.user = owner
    with django_assert_num_queries(1) as queries:
        assert notifications_context(request) == {"notifications_unread": 0}
    assert "COUNT(" in queries.captured_queries[0]["sql"].upper()

    request.user = AnonymousUser()
    with django_assert_num_queries(0):
        assert notifications_context(request) == {}
