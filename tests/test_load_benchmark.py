"""The load benchmark's own logic: it aims only at this machine, counts outcomes (per action, skipped, lost) and
percentiles right, and its browser gets through sign-in, the ask form's and the answer page's forms' CSRF checks to
read a clean refusal, and reads where accepted work stands from the site's own JSON. No load is generated here: no
form it posts is taken, so nothing is queued for a worker."""

from __future__ import annotations

import argparse
import importlib.util
import sys
import threading
import time
from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.utils import timezone
from pytest_django.fixtures import Settings
from pytest_django.live_server_helper import LiveServer

from tests.support import free_port
from tests.webapp.factories import answer_with_references, follow_up_draft, recheck_stored
from webapp.deepcheck.models import DeepCheck
from webapp.qa.models import FollowUpDraft, ModelAction, Question
from webapp.watch.models import Recheck, Watch

# Loaded by path: an installed dependency ships a top-level `benchmarks` package that shadows the folder.
_SPEC = importlib.util.spec_from_file_location("load_benchmark", Path(__file__).parents[1] / "benchmarks" / "load.py")
assert _SPEC is not None
assert _SPEC.loader is not None
load = sys.modules["load_benchmark"] = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(load)
Browser, Outcome, PageSample, ask_and_follow = load.Browser, load.Outcome, load.PageSample, load.ask_and_follow
percentile, require_loopback, summarise = load.percentile, load.require_loopback, load.summarise
tracking, work_state, parse_actions = load.tracking, load.work_state, load.parse_actions


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:8000/", "http://localhost:8000", "http://[::1]:8000", "https://127.0.0.2/"]
)
def test_it_accepts_loopback_urls(url: str) -> None:
    assert not require_loopback(url).endswith("/")


@pytest.mark.parametrize(
    "url",
    ["http://10.0.0.5:8000", "http://example.org", "http://localhost.example.org", "ftp://127.0.0.1/", "127.0.0.1"],
)
def test_it_refuses_anything_that_is_not_this_machine(url: str) -> None:
    with pytest.raises(ValueError, match=r"non-loopback|not an http"):
        require_loopback(url)


def test_percentiles_are_nearest_rank() -> None:
    values = [float(n) for n in range(1, 21)]
    assert percentile(values, 50) == 10.0
    assert percentile(values, 95) == 19.0
    assert percentile([7.0], 95) == 7.0
    assert percentile([], 95) is None


def test_the_summary_counts_outcomes_and_times_only_the_busy_window() -> None:
    t0 = 1000.0
    outcomes = [
        Outcome(user="a", result="answered", question_id=1, asked_at=t0, finished_at=t0 + 60, max_queue_position=3),
        Outcome(user="b", result="answered", question_id=2, asked_at=t0, finished_at=t0 + 120, max_queue_position=1),
        Outcome(user="c", result="refused", http_status=503, message="The service is busy: 2 questions are waiting."),
        Outcome(user="d", result="failed", question_id=3, finished_at=t0 + 30, message="LLM down"),
        Outcome(user="e", result="unfinished", question_id=4, last_status="generating"),
        Outcome(user="f", result="unfinished", question_id=5, last_status="retrieving"),
        Outcome(user="g", result="unfinished", question_id=6, last_status="generating"),
    ]
    samples = [
        PageSample("ask", t0 - 5, 5000.0, 200),  # idle, before the questions: not a busy figure
        *(PageSample("history", t0 + n, float(n), 200) for n in range(1, 20)),
        PageSample("index", t0 + 50, 100.0, 500),
        PageSample("ask", t0 + 500, 9000.0, 200),  # after the last answer: not busy either
    ]
    summary = summarise(outcomes, samples, started_at=t0)
    assert (summary["asked"], summary["answered"], summary["refused"], summary["failed"], summary["unfinished"]) == (
        7, 2, 1, 1, 3,
    )  # fmt: skip
    assert summary["unfinished_by_status"] == {"generating": 2, "retrieving": 1}
    assert summary["created"] == 6
    assert summary["refusal_messages"] == ["The service is busy: 2 questions are waiting."]
    assert summary["busy_seconds"] == 120.0
    assert summary["questions_per_minute"] == 1.0
    assert summary["max_queue_position"] == 3
    assert summary["page_samples_busy"] == 20
    assert summary["page_errors_busy"] == 1
    assert summary["page_p50_ms"] == 10.0
    assert summary["page_p95_ms"] == 19.0
    assert summary["page_p50_ms_idle"] == 5000.0
    assert summary["page_p95_ms_by_page"] == {"history": 19.0, "index": 100.0}


@pytest.mark.parametrize("production", [False, True], ids=["embedded", "production-behind-tls-proxy"])
def test_its_browser_signs_in_posts_the_form_and_reads_a_clean_refusal(
    live_server: LiveServer, settings: Settings, production: bool
) -> None:
    call_command("user_create", "load-user-1", "--role", "researcher", "--password", "pw-for-load", stdout=StringIO())
    settings.VERIMED = settings.VERIMED.replace(VERIMED_MAX_QUEUED_QUESTIONS=1)
    if production:
        # What VERIMED_PRODUCTION turns on: Secure cookies, which a cookie jar would not send over plain http, and
        # https taken from the proxy's header, which makes the CSRF check compare the Origin with https://host.
        settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = True
        settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    Question.objects.create(text="Already waiting?")
    browser = Browser(require_loopback(live_server.url), tls_proxy=production)
    browser.sign_in("load-user-1", "pw-for-load")
    outcome = Outcome(user="load-user-1")
    go = threading.Barrier(1)
    ask_and_follow(browser, outcome, "Is metformin safe?", go=go, deadline=time.time() + 5, poll_seconds=0.1)
    assert outcome.result == "refused"
    assert outcome.http_status == 503
    assert outcome.message == "The service is busy: 1 question is waiting. Please try again in a few minutes."
    assert Question.objects.count() == 1


def test_its_browser_reports_a_failed_sign_in(live_server: LiveServer, transactional_db: None) -> None:
    browser = Browser(require_loopback(live_server.url), tls_proxy=False)
    with pytest.raises(RuntimeError, match="signing in as nobody failed"):
        browser.sign_in("nobody", "wrong")


# A free port's number in the id would differ between the runs of a parallel session's workers: ids name the case.
@pytest.mark.parametrize(
    "url",
    [
        pytest.param("http://10.0.0.5:8081/v1", id="remote"),
        pytest.param(f"http://127.0.0.1:{free_port()}/v1", id="closed"),
    ],
)
def test_an_llm_server_it_may_not_or_cannot_probe_gives_no_rate_and_says_why(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert load.probe_rate(url, "qwen2.5-coder-1.5b-instruct") is None
    assert "prompt-reading probe unavailable" in capsys.readouterr().err


def _signed_in_browser(live_server: LiveServer) -> tuple[Browser, User]:
    call_command("user_create", "load-user-1", "--role", "researcher", "--password", "pw-for-load", stdout=StringIO())
    browser = Browser(require_loopback(live_server.url), tls_proxy=False)
    browser.sign_in("load-user-1", "pw-for-load")
    return browser, User.objects.get(username="load-user-1")


def test_actions_are_all_four_in_order_and_asking_is_always_among_them() -> None:
    assert parse_actions("ask,follow-up,recheck,deep-check") == load.ACTIONS
    assert parse_actions(" deep-check , ask ") == ("ask", "deep-check")
    assert parse_actions("ask") == ("ask",)
    with pytest.raises(argparse.ArgumentTypeError, match="include ask"):
        parse_actions("recheck")
    with pytest.raises(argparse.ArgumentTypeError, match="unknown action regenerate"):
        parse_actions("ask,regenerate")


def test_the_summary_counts_each_action_apart_and_keeps_asking_at_the_top() -> None:
    t0 = 1000.0
    outcomes = [
        Outcome(user="a", result="answered", question_id=1, accepted=True, asked_at=t0, finished_at=t0 + 60,
                max_queue_position=2),
        Outcome(user="b", result="refused", http_status=503, message="The service is busy: 1 question is waiting."),
        # a's actions, on its answered question 1
        Outcome(user="a", kind="follow-up", result="answered", on_question=1, draft_id=7, question_id=3, accepted=True,
                asked_at=t0 + 60, finished_at=t0 + 200, max_queue_position=5),
        Outcome(user="a", kind="recheck", result="refused", on_question=1, http_status=429, message="You have started"),
        Outcome(user="a", kind="deep-check", result="answered", on_question=1, accepted=True, asked_at=t0 + 60,
                finished_at=t0 + 90, max_queue_position=9),
        # b's question was refused: its actions did not run
        *(Outcome(user="b", kind=kind, result="skipped", message="its question was not answered: refused")
          for kind in ("follow-up", "recheck", "deep-check")),
    ]  # fmt: skip
    summary = summarise(outcomes, [], started_at=t0)
    assert (summary["asked"], summary["answered"], summary["refused"], summary["created"]) == (2, 1, 1, 1)
    assert summary["refusal_messages"] == ["The service is busy: 1 question is waiting."]
    by_action = summary["by_action"]
    assert list(by_action) == ["ask", "follow-up", "recheck", "deep-check"]
    assert {kind: counts["skipped"] for kind, counts in by_action.items()} == {
        "ask": 0, "follow-up": 1, "recheck": 1, "deep-check": 1,
    }  # fmt: skip
    assert by_action["follow-up"] == {
        "answered": 1, "refused": 0, "failed": 0, "unfinished": 0, "skipped": 1, "created": 1,
        "median_seconds": 140.0, "max_queue_position": 5, "messages": ["its question was not answered: refused"],
    }  # fmt: skip
    assert (by_action["recheck"]["refused"], by_action["recheck"]["created"]) == (1, 0)
    assert by_action["deep-check"]["median_seconds"] == 30.0
    assert by_action["ask"]["created"] == 1
    # The busy window runs to the follow-up's answer; questions/min to the last asked question's.
    assert (summary["busy_seconds"], summary["asking_seconds"], summary["questions_per_minute"]) == (200.0, 60.0, 1.0)
    assert summary["max_queue_position"] == 9, "the deep check's and the follow-up's places in line count too"
    assert (summary["lost"], summary["lost_items"], summary["not_visible"]) == (0, [], 0)


def test_lost_is_accepted_work_the_look_after_the_bound_found_neither_final_nor_running() -> None:
    outcomes = [
        Outcome(user="a", result="answered", question_id=1, accepted=True, end_status="done", end_state="final"),
        Outcome(user="b", result="unfinished", question_id=2, accepted=True, end_status="generating",
                end_state="running"),
        Outcome(user="a", kind="deep-check", result="unfinished", on_question=1, accepted=True, end_status="failed",
                end_state="lost"),
        Outcome(user="a", kind="follow-up", result="unfinished", on_question=1, draft_id=4, accepted=True,
                end_status="HTTP 404", end_state="lost"),
        Outcome(user="a", kind="recheck", result="unfinished", on_question=1, accepted=True, end_status="not stored",
                end_state="not visible"),
    ]  # fmt: skip
    summary = summarise(outcomes, [], started_at=0.0)
    assert summary["lost"] == 2
    assert summary["lost_items"] == [
        {"user": "a", "action": "deep-check", "item": "deep check of question 1", "status": "failed"},
        {"user": "a", "action": "follow-up", "item": "follow-up draft 4 of question 1", "status": "HTTP 404"},
    ]
    assert summary["not_visible"] == 1
    assert summary["not_visible_items"][0]["item"] == "recheck of question 1"


@pytest.mark.parametrize(
    ("outcome", "status", "error", "state"),
    [
        (Outcome(user="a", question_id=1), "done", "", "final"),
        (Outcome(user="a", question_id=1), "retrieving", "", "running"),
        (Outcome(user="a", question_id=1), "failed", "LLM down", "final"),
        (Outcome(user="a", question_id=1), "failed", "it had not moved for 30 minutes, so it was lost (…)", "lost"),
        (Outcome(user="a", question_id=1), "paused", "", "lost"),
        (Outcome(user="a", kind="follow-up", on_question=1, draft_id=2, accepted=True), "rewriting", "", "running"),
        (Outcome(user="a", kind="follow-up", on_question=1, draft_id=2, accepted=True), "fallback", "", "final"),
        (Outcome(user="a", kind="deep-check", on_question=1, accepted=True), "running", "", "running"),
        (Outcome(user="a", kind="deep-check", on_question=1, accepted=True), "stopped", "", "final"),
        (Outcome(user="a", kind="deep-check", on_question=1, accepted=True), "none", "", "lost"),
        (Outcome(user="a", kind="recheck", on_question=1, accepted=True), "stored", "", "final"),
        (Outcome(user="a", kind="recheck", on_question=1, accepted=True), "not stored", "", "not visible"),
    ],
)
def test_each_kind_of_work_has_its_final_and_running_statuses(
    outcome: Outcome, status: str, error: str, state: str
) -> None:
    track = tracking(outcome)
    assert track is not None
    assert work_state(track, status, error) == state


def test_what_is_followed_is_the_work_the_site_took() -> None:
    assert tracking(Outcome(user="a")) is None, "a refused question left nothing to follow"
    assert tracking(Outcome(user="a", kind="deep-check", on_question=1)) is None, "nor a refused deep check"
    draft = Outcome(user="a", kind="follow-up", on_question=1, draft_id=2, accepted=True)
    assert tracking(draft).path == "/questions/1/follow-ups/2.json"
    draft.question_id = 9  # once its proposal is asked, the new question is what finishes it
    assert tracking(draft).path == "/questions/9.json"
    recheck = tracking(Outcome(user="a", kind="recheck", on_question=1, accepted=True, rechecks_before=1))
    assert recheck is not None
    listed = [{"trigger": "manual"}, {"trigger": "sync"}]
    assert recheck.status_of({"rechecks": listed}) == "not stored", "a sync's re-check is not the one asked for"
    assert recheck.status_of({"rechecks": [*listed, {"trigger": "manual"}]}) == "stored"


def test_a_question_not_answered_skips_the_actions_after_it_with_the_reason(
    live_server: LiveServer, settings: Settings
) -> None:
    browser, _ = _signed_in_browser(live_server)
    settings.VERIMED = settings.VERIMED.replace(VERIMED_MAX_QUEUED_QUESTIONS=1)
    Question.objects.create(text="Already waiting?")
    plan = [Outcome(user="load-user-1", kind=kind) for kind in load.ACTIONS]
    load.user_run(browser, plan, "Is metformin safe?", go=threading.Barrier(1), deadline=time.time() + 5,
                  poll_seconds=0.1, rewrite_wait=1.0)  # fmt: skip
    assert [o.result for o in plan] == ["refused", "skipped", "skipped", "skipped"]
    assert plan[1].message == (
        "its question was not answered: refused: The service is busy: 1 question is waiting. "
        "Please try again in a few minutes."
    )
    assert Question.objects.count() == 1


@pytest.mark.parametrize("kind", ["follow-up", "recheck", "deep-check"])
def test_each_action_posts_the_answer_pages_form_and_reads_a_clean_refusal(
    live_server: LiveServer, settings: Settings, kind: str
) -> None:
    browser, user = _signed_in_browser(live_server)
    answered = answer_with_references(user=user)
    settings.VERIMED = settings.VERIMED.replace(VERIMED_MAX_QUEUED_QUESTIONS=1)
    Question.objects.create(text="Already waiting?")
    outcome = Outcome(user="load-user-1", kind=kind)
    load.act(browser, outcome, answered.pk, deadline=time.time() + 5, poll_seconds=0.1, rewrite_wait=1.0)
    assert (outcome.result, outcome.http_status, outcome.accepted) == ("refused", 503, False)
    assert outcome.message == "The service is busy: 1 question is waiting. Please try again in a few minutes."
    assert not ModelAction.objects.exists()
    assert not FollowUpDraft.objects.exists()
    assert not DeepCheck.objects.exists()
    # Watching is no model work: it was taken, and only "Re-check now" was refused.
    assert Watch.objects.filter(question=answered).exists() == (kind == "recheck")


def test_the_look_after_the_bound_reads_each_kind_of_work_from_the_site(
    live_server: LiveServer, transactional_db: None
) -> None:
    browser, user = _signed_in_browser(live_server)
    answered = answer_with_references(user=user)
    draft = follow_up_draft(parent=answered)
    page = browser.request("GET", f"/questions/{answered.pk}/").text
    assert load.draft_on_page(page) == (
        draft.pk,
        f"/questions/{answered.pk}/follow-ups/{draft.pk}.json",
        f"/questions/{answered.pk}/follow-ups/{draft.pk}/ask",
    )
    running = Question.objects.create(text="Still writing?", user=user, status=Question.Status.GENERATING)
    # A deep check queued an hour ago and never picked up: the site itself shows it failed, as lost.
    check = DeepCheck.objects.create(question=answered)
    DeepCheck.objects.filter(pk=check.pk).update(updated_at=timezone.now() - timedelta(hours=1))
    recheck = Outcome(user="u", kind="recheck", on_question=answered.pk, accepted=True)
    outcomes = [
        Outcome(user="u", kind="follow-up", on_question=answered.pk, draft_id=draft.pk, accepted=True),
        Outcome(user="u", question_id=running.pk, accepted=True),
        Outcome(user="u", question_id=answered.pk, accepted=True),
        Outcome(user="u", kind="deep-check", on_question=answered.pk, accepted=True),
        recheck,
        Outcome(user="u", question_id=answered.pk + 1000, accepted=True),  # a question the site no longer has
    ]
    for outcome in outcomes:
        load.look_once_more(browser, outcome)
    assert [(o.end_status, o.end_state) for o in outcomes] == [
        ("rewriting", "running"),
        ("generating", "running"),
        ("done", "final"),
        ("failed", "lost"),
        ("not stored", "not visible"),
        ("HTTP 404", "lost"),
    ]
    recheck_stored(question=answered, trigger=Recheck.Trigger.MANUAL, key="manual-1", changes=[])
    load.look_once_more(browser, recheck)
    assert (recheck.end_status, recheck.end_state) == ("stored", "final")
