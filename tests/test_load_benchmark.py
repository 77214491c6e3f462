"""The load benchmark's own logic: it aims only at this machine, counts outcomes and percentiles right, and its
browser gets through sign-in and the ask form's CSRF check to read a clean refusal. No load is generated here."""

from __future__ import annotations

import importlib.util
import sys
import threading
import time
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from pytest_django.fixtures import Settings
from pytest_django.live_server_helper import LiveServer

from tests.support import free_port
from webapp.qa.models import Question

# Loaded by path: an installed dependency ships a top-level `benchmarks` package that shadows the folder.
_SPEC = importlib.util.spec_from_file_location("load_benchmark", Path(__file__).parents[1] / "benchmarks" / "load.py")
assert _SPEC is not None
assert _SPEC.loader is not None
load = sys.modules["load_benchmark"] = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(load)
Browser, Outcome, PageSample, ask_and_follow = load.Browser, load.Outcome, load.PageSample, load.ask_and_follow
percentile, require_loopback, summarise = load.percentile, load.require_loopback, load.summarise


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


@pytest.mark.parametrize("url", ["http://10.0.0.5:8081/v1", f"http://127.0.0.1:{free_port()}/v1"])
def test_an_llm_server_it_may_not_or_cannot_probe_gives_no_rate_and_says_why(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert load.probe_rate(url, "qwen2.5-coder-1.5b-instruct") is None
    assert "prompt-reading probe unavailable" in capsys.readouterr().err
