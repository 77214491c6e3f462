"""The deep check under the admission rule every kind of model work passes (webapp/qa/services/admission.py): a
repeated click returns a finished check instead of running it again, a run again counts against the person's hourly
model actions and the queue valve, deep checks hold places in the queue questions wait in, only the person who asked
(or an admin) starts or stops one, and a check whose worker died is shown as lost and may be run again."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ImproperlyConfigured
from django.test import Client
from django.utils import timezone
from pytest_django.fixtures import Settings
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.webapp.deepcheck.conftest import FakeSearch
from tests.webapp.factories import answer_with_three_verdicts, deep_check_stored
from webapp.deepcheck import services
from webapp.deepcheck.models import DeepCheck
from webapp.deepcheck.selectors import deep_check_queue_position
from webapp.deepcheck.tasks import deep_check_run_task
from webapp.qa.models import ModelAction, Question
from webapp.qa.queue import model_work_being_done, question_queue_position
from webapp.qa.services import admission

pytestmark = pytest.mark.django_db


@pytest.fixture
def enqueued(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int | None]]:
    """(check, run) of each deep check handed to the broker."""
    calls: list[tuple[int, int | None]] = []
    monkeypatch.setattr(
        services,
        "deep_check_enqueue",
        lambda *, deep_check_id, run=None, action_id=None: calls.append((deep_check_id, run)),
    )
    return calls


def _api(user: User) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


def _start_json(client: Client, question: Question, **form: str) -> Any:
    return client.post(f"/questions/{question.pk}/deep-check", form, HTTP_ACCEPT="application/json")


def _queued_check(*, user: User | None, minutes_ago: float) -> DeepCheck:
    """Another answer's deep check, queued `minutes_ago` and still waiting."""
    question = answer_with_three_verdicts(user=user, text=f"Queued {minutes_ago} minutes ago?")
    check = deep_check_stored(question=question, status=DeepCheck.Status.QUEUED)
    at = timezone.now() - timedelta(minutes=minutes_ago)
    DeepCheck.objects.filter(pk=check.pk).update(queued_at=at, updated_at=at, tree=None)
    check.refresh_from_db()
    return check


def _asked(status: Question.Status, *, minutes_ago: float) -> Question:
    question = Question.objects.create(text=f"{status} question?", status=status)
    Question.objects.filter(pk=question.pk).update(created_at=timezone.now() - timedelta(minutes=minutes_ago))
    question.refresh_from_db()
    return question


# --- A repeated click, and running it again


def test_a_repeated_start_returns_the_finished_check_as_it_is(
    answered: Question,
    researcher_client: Client,
    search: FakeSearch,
    enqueued: list[tuple[int, int | None]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        assert _start_json(researcher_client, answered).status_code == 202
    check = DeepCheck.objects.get()
    deep_check_run_task.apply(args=(check.pk,), kwargs={"run": check.run}, throw=False)
    searched = len(search.calls)

    with django_capture_on_commit_callbacks(execute=True):
        again = _start_json(researcher_client, answered)

    assert again.status_code == 202
    assert again.json()["status"] == "done"
    assert again.json()["tree"] is not None, "the result stays"
    assert enqueued == [(check.pk, 1)], "nothing was queued for the second click"
    assert len(search.calls) == searched
    assert ModelAction.objects.filter(kind=ModelAction.Kind.DEEP_CHECK).count() == 1


def test_rerun_starts_a_finished_check_again_as_a_new_run(
    answered: Question,
    researcher_client: Client,
    enqueued: list[tuple[int, int | None]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    deep_check_stored(question=answered)

    with django_capture_on_commit_callbacks(execute=True):
        response = _start_json(researcher_client, answered, rerun="1")

    assert response.status_code == 202
    assert (response.json()["status"], response.json()["tree"]) == ("queued", None)
    check = DeepCheck.objects.get()
    assert enqueued == [(check.pk, check.run)]
    assert check.run == 1


def test_a_task_queued_for_an_earlier_run_does_nothing(
    answered: Question, search: FakeSearch, enqueued: list[tuple[int, int | None]]
) -> None:
    first = services.deep_check_start(question=answered)
    services.deep_check_stop(deep_check_id=first.pk)  # queued: stopped at once, its task still in the broker
    second = services.deep_check_start(question=answered, rerun=True)
    assert second.run == first.run + 1

    assert deep_check_run_task.apply(args=(first.pk,), kwargs={"run": first.run}, throw=False).successful()
    assert (DeepCheck.objects.get().status, search.calls) == (DeepCheck.Status.QUEUED, [])

    deep_check_run_task.apply(args=(second.pk,), kwargs={"run": second.run}, throw=False)
    assert DeepCheck.objects.get().status == DeepCheck.Status.DONE
    calls = len(search.calls)
    # A redelivered task of the finished run leaves the result as it is.
    deep_check_run_task.apply(args=(second.pk,), kwargs={"run": second.run}, throw=False)
    assert len(search.calls) == calls


# --- The hourly limit on model actions and the queue valve


def test_running_it_again_past_the_hourly_limit_is_refused_with_429_and_retry_after(
    answered: Question, owner: User, researcher_client: Client, settings: Settings
) -> None:
    # The answered question is this hour's first action, the first run its second.
    settings.VERIMED = settings.VERIMED.replace(VERIMED_MODEL_ACTIONS_PER_HOUR=3, VERIMED_MAX_QUEUED_QUESTIONS=0)
    services.deep_check_start(question=answered, user=owner)
    DeepCheck.objects.update(status=DeepCheck.Status.DONE)
    assert _start_json(researcher_client, answered, rerun="1").status_code == 202
    DeepCheck.objects.update(status=DeepCheck.Status.DONE)

    page_json = _start_json(researcher_client, answered, rerun="1")
    assert page_json.status_code == 429
    assert "You have started 3 questions, follow-up rewrites, deep checks and re-checks" in page_json.json()["error"]
    assert 3500 < int(page_json["Retry-After"]) <= 3600

    api = _api(owner).post(f"/api/v1/questions/{answered.pk}/deep-check", {"rerun": True}, format="json")
    assert api.status_code == 429
    assert "You can start another at" in api.json()["detail"]
    assert 3500 < int(api["Retry-After"]) <= 3600

    # Without JavaScript: a page that says why, with the way back to the answer.
    page = researcher_client.post(f"/questions/{answered.pk}/deep-check", {"rerun": "1"})
    assert page.status_code == 429
    html = page.content.decode()
    assert "The deep check was not started" in html
    assert "the most allowed" in html
    assert f'href="/questions/{answered.pk}/"' in html

    assert DeepCheck.objects.get().status == DeepCheck.Status.DONE
    assert ModelAction.objects.filter(kind=ModelAction.Kind.DEEP_CHECK).count() == 2


# Committed for real (not in a test's transaction): the check is published as its admission commits.
@pytest.mark.django_db(transaction=True)
def test_a_deep_check_the_broker_cannot_take_fails_with_the_reason_and_is_not_counted(
    broker_down: None, answered: Question, owner: User, researcher_client: Client
) -> None:
    response = _start_json(researcher_client, answered)

    assert response.status_code != 500
    check = DeepCheck.objects.get()
    assert check.status == DeepCheck.Status.FAILED
    assert check.error == "The task queue is unreachable; please try again shortly."
    assert not ModelAction.objects.filter(kind=ModelAction.Kind.DEEP_CHECK).exists(), (
        "work never started is not counted"
    )


def test_a_full_queue_refuses_a_deep_check_with_503_and_stores_nothing(
    answered: Question, owner: User, researcher_client: Client, settings: Settings
) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_MAX_QUEUED_QUESTIONS=2)
    _asked(Question.Status.QUEUED, minutes_ago=2)
    _asked(Question.Status.GENERATING, minutes_ago=1)

    api = _api(owner).post(f"/api/v1/questions/{answered.pk}/deep-check")
    assert api.status_code == 503
    assert api.json() == {"detail": "The service is busy: 2 questions are waiting. Please try again in a few minutes."}
    assert api["Retry-After"] == "60"
    assert _start_json(researcher_client, answered).status_code == 503
    assert not DeepCheck.objects.exists()
    assert not ModelAction.objects.exists()


def test_deep_checks_queued_or_running_fill_the_queue_valve_that_refuses_questions(
    researcher_client: Client, role_users: dict[str, User], settings: Settings
) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_MAX_QUEUED_QUESTIONS=2)
    _queued_check(user=None, minutes_ago=3)
    running = _queued_check(user=None, minutes_ago=2)
    DeepCheck.objects.filter(pk=running.pk).update(status=DeepCheck.Status.RUNNING)

    response = researcher_client.post("/", {"question": "Is metformin safe in pregnancy?"})

    assert response.status_code == 503
    assert "The service is busy: 2 deep checks are waiting." in response.content.decode()
    DeepCheck.objects.filter(pk=running.pk).update(status=DeepCheck.Status.DONE)
    _asked(Question.Status.QUEUED, minutes_ago=1)
    with pytest.raises(admission.QueueFullError, match="busy: 1 question and 1 deep check are waiting"):
        admission.question_create(text="One more?")


def test_a_lost_deep_check_holds_no_place_in_the_queue(settings: Settings) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_MAX_QUEUED_QUESTIONS=1)
    lost = _queued_check(user=None, minutes_ago=3)
    DeepCheck.objects.filter(pk=lost.pk).update(
        status=DeepCheck.Status.RUNNING, updated_at=timezone.now() - timedelta(hours=2)
    )

    assert admission.question_create(text="Still accepted?").status == Question.Status.QUEUED


# --- Places in line


def test_a_question_counts_the_deep_checks_queued_before_it_and_a_deep_check_shows_its_own_place(
    answered: Question, researcher_client: Client
) -> None:
    _asked(Question.Status.GENERATING, minutes_ago=10)
    earlier = _queued_check(user=None, minutes_ago=8)
    question = _asked(Question.Status.QUEUED, minutes_ago=6)
    _queued_check(user=None, minutes_ago=1)  # queued after the question: behind it

    assert question_queue_position(question=question) == 3

    services.deep_check_start(question=answered)
    payload = researcher_client.get(f"/questions/{answered.pk}/deep-check.json").json()
    assert payload["status"] == "queued"
    assert payload["queue_position"] == 5  # the running question, the question and both deep checks ahead of it

    DeepCheck.objects.filter(pk=earlier.pk).update(status=DeepCheck.Status.RUNNING)
    assert researcher_client.get(f"/questions/{answered.pk}/deep-check.json").json()["queue_position"] == 5
    DeepCheck.objects.filter(pk=earlier.pk).update(status=DeepCheck.Status.DONE)
    assert researcher_client.get(f"/questions/{answered.pk}/deep-check.json").json()["queue_position"] == 4


def test_deep_checks_queued_in_the_same_instant_get_distinct_places() -> None:
    first, second = _queued_check(user=None, minutes_ago=2), _queued_check(user=None, minutes_ago=1)
    DeepCheck.objects.filter(pk=second.pk).update(queued_at=first.queued_at)

    places = {deep_check_queue_position(deep_check=DeepCheck.objects.get(pk=pk)) for pk in (first.pk, second.pk)}

    assert places == {1, 2}


def test_the_background_embedder_gives_way_to_a_deep_check_but_not_to_a_lost_one() -> None:
    check = _queued_check(user=None, minutes_ago=1)
    DeepCheck.objects.filter(pk=check.pk).update(status=DeepCheck.Status.RUNNING, updated_at=timezone.now())
    assert model_work_being_done()

    DeepCheck.objects.filter(pk=check.pk).update(updated_at=timezone.now() - timedelta(hours=2))
    assert not model_work_being_done()


# --- Who may start and stop it


def test_a_reviewer_reads_the_check_and_flags_claims_but_may_not_start_or_stop_it(
    answered: Question, owner: User, reviewer_client: Client, role_users: dict[str, User]
) -> None:
    reviewer = role_users["reviewer"]
    refused = _start_json(reviewer_client, answered)
    assert refused.status_code == 403
    assert "Only the person who asked, or an admin" in refused.json()["error"]
    assert _api(reviewer).post(f"/api/v1/questions/{answered.pk}/deep-check").status_code == 403
    assert not DeepCheck.objects.exists()

    check = deep_check_stored(question=answered, status=DeepCheck.Status.QUEUED)
    assert reviewer_client.post(f"/questions/{answered.pk}/deep-check/stop").status_code == 403
    assert _api(reviewer).post(f"/api/v1/questions/{answered.pk}/deep-check/stop").status_code == 403
    assert DeepCheck.objects.get(pk=check.pk).status == DeepCheck.Status.QUEUED

    # Reading and flagging stay theirs: the section without its buttons, the JSON, the API's GET, the flags.
    page = reviewer_client.get(f"/questions/{answered.pk}/").content.decode()
    assert 'id="deep-check"' in page
    assert 'id="deep-check-button"' not in page
    assert 'name="csrfmiddlewaretoken"' in page[page.index('id="deep-check"') :]
    assert reviewer_client.get(f"/questions/{answered.pk}/deep-check.json").json()["status"] == "queued"
    assert _api(reviewer).get(f"/api/v1/questions/{answered.pk}/deep-check").status_code == 200
    DeepCheck.objects.filter(pk=check.pk).update(status=DeepCheck.Status.DONE)
    flagged = reviewer_client.post(
        f"/questions/{answered.pk}/deep-check/flags",
        data={"sentence": 0, "claim": 0, "reason": "unsupported"},
        content_type="application/json",
    )
    assert flagged.status_code == 201


def test_an_admin_may_start_and_stop_anyones_check(answered: Question, role_users: dict[str, User]) -> None:
    admin = _api(role_users["admin"])
    assert admin.post(f"/api/v1/questions/{answered.pk}/deep-check").status_code == 202
    assert admin.post(f"/api/v1/questions/{answered.pk}/deep-check/stop").json()["status"] == "stopped"


# --- A check whose worker died


def _lose(check: DeepCheck, status: DeepCheck.Status = DeepCheck.Status.RUNNING) -> None:
    DeepCheck.objects.filter(pk=check.pk).update(status=status, updated_at=timezone.now() - timedelta(minutes=31))


def test_a_check_that_stopped_moving_reads_as_lost_and_runs_again_when_asked(
    answered: Question,
    owner: User,
    researcher_client: Client,
    search: FakeSearch,
    enqueued: list[tuple[int, int | None]],
) -> None:
    check = services.deep_check_start(question=answered, user=owner)
    _lose(check)

    payload = researcher_client.get(f"/questions/{answered.pk}/deep-check.json").json()
    assert payload["status"] == "failed"
    assert "had not moved for 30 minutes, so it was lost" in payload["error"]
    assert payload["queue_position"] is None
    api = _api(owner).get(f"/api/v1/questions/{answered.pk}/deep-check").json()
    assert (api["status"], api["error"]) == ("failed", payload["error"])

    # Run again, it starts over as a new run; the lost run's task, should it ever come, does nothing.
    restarted = _start_json(researcher_client, answered, rerun="1")
    assert (restarted.status_code, restarted.json()["status"]) == (202, "queued")
    assert DeepCheck.objects.get().run == check.run + 1
    deep_check_run_task.apply(args=(check.pk,), kwargs={"run": check.run}, throw=False)
    assert search.calls == []


def test_a_lost_running_check_is_stopped_at_once(answered: Question, researcher_client: Client) -> None:
    check = deep_check_stored(question=answered, status=DeepCheck.Status.RUNNING)
    _lose(check)

    stopped = researcher_client.post(f"/questions/{answered.pk}/deep-check/stop", HTTP_ACCEPT="application/json")

    assert stopped.json()["status"] == "stopped"


def test_a_check_still_moving_is_not_lost(answered: Question, researcher_client: Client, settings: Settings) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_DEEP_CHECK_LOST_MINUTES=60)
    check = deep_check_stored(question=answered, status=DeepCheck.Status.RUNNING)
    _lose(check)  # 31 minutes without moving: within the hour allowed here

    assert researcher_client.get(f"/questions/{answered.pk}/deep-check.json").json()["status"] == "running"
    assert _start_json(researcher_client, answered, rerun="1").json()["status"] == "running"


def test_the_lost_rule_must_allow_longer_than_a_task_may_run(settings: Settings) -> None:
    with pytest.raises(ImproperlyConfigured, match=r"VERIMED_DEEP_CHECK_LOST_MINUTES=15: .*longer than"):
        settings.VERIMED.replace(VERIMED_DEEP_CHECK_LOST_MINUTES=15)  # the task may run 16 minutes
