"""The "Re-check now" button under the admission rule every kind of model work passes
(webapp/qa/services/admission.py): each click is a search and a verification, so it counts against the person's
hourly model actions and is refused while the queue is full, with the status and the message asking gets."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone
from pytest_django.fixtures import Settings

from webapp.qa.models import ModelAction, Question

pytestmark = pytest.mark.django_db

Capture = Callable[..., Any]


def _recheck(client: Client, question: Question, capture: Capture) -> tuple[Any, int]:
    """The response, and how many re-check tasks it queued."""
    with capture() as callbacks:
        response = client.post(f"/questions/{question.pk}/recheck")
    return response, len(callbacks)


def test_each_click_counts_and_past_the_hourly_limit_it_is_refused_with_429_and_queues_nothing(
    researcher_client: Client,
    watched: Question,
    owner: User,
    settings: Settings,
    django_capture_on_commit_callbacks: Capture,
) -> None:
    # The watched question is this hour's first action; two clicks make three.
    settings.VERIMED = settings.VERIMED.replace(VERIMED_MODEL_ACTIONS_PER_HOUR=3, VERIMED_MAX_QUEUED_QUESTIONS=0)
    for _ in range(2):
        response, queued = _recheck(researcher_client, watched, django_capture_on_commit_callbacks)
        assert (response.status_code, queued) == (302, 1)
    assert ModelAction.objects.filter(user=owner, kind=ModelAction.Kind.RECHECK).count() == 2

    refused, queued = _recheck(researcher_client, watched, django_capture_on_commit_callbacks)

    assert (refused.status_code, queued) == (429, 0)
    assert 3500 < int(refused["Retry-After"]) <= 3600
    html = refused.content.decode()
    assert "The re-check was not started" in html
    assert "You have started 3 questions, follow-up rewrites, deep checks and re-checks in the last hour" in html
    assert f'href="/questions/{watched.pk}/"' in html
    assert ModelAction.objects.filter(user=owner).count() == 2


def test_a_click_stops_counting_an_hour_later(
    researcher_client: Client, watched: Question, settings: Settings, django_capture_on_commit_callbacks: Capture
) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_MODEL_ACTIONS_PER_HOUR=2, VERIMED_MAX_QUEUED_QUESTIONS=0)
    assert _recheck(researcher_client, watched, django_capture_on_commit_callbacks)[0].status_code == 302
    assert _recheck(researcher_client, watched, django_capture_on_commit_callbacks)[0].status_code == 429

    ModelAction.objects.update(created_at=timezone.now() - timedelta(minutes=61))

    assert _recheck(researcher_client, watched, django_capture_on_commit_callbacks)[0].status_code == 302
    assert ModelAction.objects.count() == 1, "the click older than the hour was cleared as the new one was added"


def test_a_full_queue_refuses_the_recheck_with_503(
    researcher_client: Client, watched: Question, settings: Settings, django_capture_on_commit_callbacks: Capture
) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_MAX_QUEUED_QUESTIONS=1)
    Question.objects.create(text="Waiting?", status=Question.Status.QUEUED)

    refused, queued = _recheck(researcher_client, watched, django_capture_on_commit_callbacks)

    assert (refused.status_code, queued) == (503, 0)
    assert refused["Retry-After"] == "60"
    assert "The service is busy: 1 question is waiting." in refused.content.decode()
    assert not ModelAction.objects.exists()
