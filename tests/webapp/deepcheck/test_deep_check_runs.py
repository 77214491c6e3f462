"""Starting, running, stopping and failing a deep check, through its service and its Celery task (run here with
apply(), as a worker would run it); and `manage.py deep_check`."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.core.management import call_command
from pytest_django.fixtures import Settings

from tests.support import free_port
from tests.webapp.deepcheck.conftest import CITED, OTHER, FakeSearch
from verifier.claim_extraction import ClaimExtractor
from webapp.deepcheck import services
from webapp.deepcheck.models import DeepCheck
from webapp.deepcheck.tasks import deep_check_run_task
from webapp.qa.models import Question

pytestmark = pytest.mark.django_db


@pytest.fixture
def enqueued(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    monkeypatch.setattr(
        services, "deep_check_enqueue", lambda *, deep_check_id, run=None, action_id=None: calls.append(deep_check_id)
    )
    return calls


def test_it_is_queued_on_commit_and_the_task_stores_the_tree(
    answered: Question, owner: User, search: FakeSearch, enqueued: list[int], django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        check = services.deep_check_start(question=answered, user=owner)
    assert enqueued == [check.pk]
    assert (check.status, check.requested_by) == (DeepCheck.Status.QUEUED, owner)

    assert deep_check_run_task.apply(args=(check.pk,), throw=False).successful()

    check.refresh_from_db()
    assert (check.status, check.stage, check.progress) == (DeepCheck.Status.DONE, "done", 100)
    first, second = check.tree["sentences"]
    assert [(c["text"], c["verdict"]) for c in first["claims"]] == [
        ("Zorvistatin lowered blood pressure in adults.", "SUPPORT"),
        ("Zorvistatin reduced stroke mortality.", "SUPPORT_ELSEWHERE"),
    ]
    assert first["verdict"] == "SUPPORT_ELSEWHERE"
    assert second["verdict"] == "SUPPORT"
    elsewhere = first["claims"][1]["evidence"][1]
    assert (elsewhere["pmid"], elsewhere["cited"], elsewhere["label"]) == (OTHER, False, "SUPPORT")
    # Only the claim the cited abstract did not settle was searched for, with the question's own search settings.
    assert [query for query, _ in search.calls] == ["Zorvistatin reduced stroke mortality."]
    assert search.calls[0][1].retrieval.mode == answered.settings["retrieval"]["mode"]
    assert check.models_used == {"extractor": "fake-llm", "verifier": "fake-classifier", "evidence": "fake-evidence"}
    assert set(check.timings_ms) == {"extraction", "judging", "requery", "total"}
    assert check.settings["max_tokens"] > 0


def test_a_check_queued_or_running_is_not_started_twice_and_a_finished_one_runs_again_when_asked(
    answered: Question, search: FakeSearch, enqueued: list[int], django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        first = services.deep_check_start(question=answered)
        again = services.deep_check_start(question=answered, rerun=True)  # still queued: not started twice
    assert again.pk == first.pk
    assert enqueued == [first.pk]

    deep_check_run_task.apply(args=(first.pk,), throw=False)
    with django_capture_on_commit_callbacks(execute=True):
        kept = services.deep_check_start(question=answered)
    assert (kept.status, enqueued) == (DeepCheck.Status.DONE, [first.pk])
    with django_capture_on_commit_callbacks(execute=True):
        rerun = services.deep_check_start(question=answered, rerun=True)
    assert (rerun.pk, rerun.status, rerun.tree) == (first.pk, DeepCheck.Status.QUEUED, None)
    assert enqueued == [first.pk, first.pk]
    assert DeepCheck.objects.count() == 1


def test_an_unanswered_question_cannot_be_deep_checked(answered: Question) -> None:
    Question.objects.filter(pk=answered.pk).update(status=Question.Status.GENERATING)

    with pytest.raises(services.DeepCheckRejectedError, match="answered"):
        services.deep_check_start(question=Question.objects.get(pk=answered.pk))


def test_a_queued_check_stops_at_once_and_its_task_then_does_nothing(answered: Question, search: FakeSearch) -> None:
    check = services.deep_check_start(question=answered)

    stopped = services.deep_check_stop(deep_check_id=check.pk)
    assert (stopped.status, stopped.stop_requested) == (DeepCheck.Status.STOPPED, True)

    assert deep_check_run_task.apply(args=(check.pk,), throw=False).successful()
    check.refresh_from_db()
    assert (check.status, check.tree) == (DeepCheck.Status.STOPPED, None)
    assert search.calls == []


def test_a_running_check_stops_between_levels(
    answered: Question, search: FakeSearch, monkeypatch: pytest.MonkeyPatch
) -> None:
    check = services.deep_check_start(question=answered)
    real_progress = services._progress

    def stop_while_extracting(deep_check_id: int, stage: str, percent: int) -> None:
        real_progress(deep_check_id, stage, percent)
        if stage == "extracting":
            services.deep_check_stop(deep_check_id=deep_check_id)

    monkeypatch.setattr(services, "_progress", stop_while_extracting)
    assert deep_check_run_task.apply(args=(check.pk,), throw=False).successful()

    check.refresh_from_db()
    assert (check.status, check.stage, check.tree) == (DeepCheck.Status.STOPPED, "extracting", None)
    assert search.calls == []  # stopped before the claims were judged, so none was searched for
    assert services.deep_check_stop(deep_check_id=check.pk).status == DeepCheck.Status.STOPPED  # finished: left


def test_a_model_server_that_stays_down_fails_the_check_with_its_reason(
    answered: Question, search: FakeSearch, settings: Settings
) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_LLM_SERVER_KIND="llama.cpp")
    settings.VERIMED = settings.VERIMED.replace(
        VERIMED_LLM_BASE_URL=f"http://127.0.0.1:{free_port()}/v1"
    )  # nothing listens there
    settings.VERIMED = settings.VERIMED.replace(VERIMED_LLM_TIMEOUT_SECONDS=2)
    settings.VERIMED = settings.VERIMED.replace(VERIMED_LLM_MAX_RETRIES=0)
    check = services.deep_check_start(question=answered)

    deep_check_run_task.apply(args=(check.pk,), throw=False)  # retried twice (eagerly), then failed

    check.refresh_from_db()
    assert check.status == DeepCheck.Status.FAILED
    assert "unreachable" in check.error
    assert check.tree is None


def test_a_bug_fails_the_check_as_an_internal_error(
    answered: Question, search: FakeSearch, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: ClaimExtractor, question: str, sentences: object) -> None:
        raise KeyError("sentences")

    monkeypatch.setattr(ClaimExtractor, "extract", broken)
    check = services.deep_check_start(question=answered)

    deep_check_run_task.apply(args=(check.pk,), throw=False)

    check.refresh_from_db()
    assert check.status == DeepCheck.Status.FAILED
    assert check.error.startswith("Internal error in the deep check")


def test_an_answer_that_cites_nothing_gives_an_empty_tree(answered: Question, search: FakeSearch) -> None:
    Question.objects.filter(pk=answered.pk).update(answer_text="The abstracts do not answer this.")
    check = services.deep_check_start(question=answered)

    deep_check_run_task.apply(args=(check.pk,), throw=False)

    check.refresh_from_db()
    assert check.status == DeepCheck.Status.DONE
    assert [(s["verdict"], s["claims"]) for s in check.tree["sentences"]] == [("UNCITED", [])]
    assert check.tree["extraction_raw"] == ""


def test_the_task_is_registered_and_routed_to_the_llm_queue() -> None:
    from webapp.celery import app

    assert services.TASK_NAME in app.tasks
    assert settings.CELERY_TASK_ROUTES[services.TASK_NAME] == {"queue": "llm"}


def test_the_command_runs_it_in_process_and_prints_json(answered: Question, search: FakeSearch) -> None:
    out = StringIO()
    call_command("deep_check", str(answered.pk), "--in-process", "--json", stdout=out)

    payload = json.loads(out.getvalue())
    assert payload["status"] == "done"
    assert payload["tree"]["sentences"][0]["citations"] == [CITED]

    readable = StringIO()
    call_command("deep_check", str(answered.pk), "--in-process", stdout=readable)
    assert "[SUPPORT_ELSEWHERE] Zorvistatin reduced stroke mortality." in readable.getvalue()
