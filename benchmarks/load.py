"""Many researchers asking at once against a running site, and then doing the other model work it offers: answered,
refused cleanly, failed or still unfinished at the time bound, nothing lost; page latency while the workers are busy.

    make run                                     # or the production profile: anything serving the site on loopback
    .venv/bin/python benchmarks/load.py --url http://127.0.0.1:8000 --users 20 --timeout 900
    .venv/bin/python benchmarks/load.py --actions ask ...   # asking only: the figure before the other actions

Each simulated user signs in as its own researcher account (created here with `manage.py user_create` against the
settings in this shell's environment, so export the same DATABASE_URL etc. as the site; or pass `--accounts FILE`
with `username:password` lines), and all of them post a BioASQ dev question at the same instant, through the ask
form with its CSRF token, as a browser would. Each then polls its question's JSON until it is finished or the
`--timeout` passes. Once its question is answered, each user does the `--actions` after asking side by side, through
the answer page's forms: a follow-up (start it, wait for its rewrite as the page does, ask the proposal, follow the
new question), "Watch" then "Re-check now" (until the re-check is stored), and a deep check (until its JSON is
final). After the bound, every piece of work the site accepted is looked at once more: work neither finished nor
visibly queued or running is reported as lost. Meanwhile one more signed-in user (an admin, so the index page is
included) keeps opening pages and records how long each took. Only loopback URLs are accepted: this is a load
generator. The LLM server (`--llm-url`, default `VERIMED_LLM_BASE_URL`) is probed for its prompt-reading rate before
and after the load (`probe_tokens_per_s`): questions/min mean little without it.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import math
import os
import platform
import re
import secrets
import statistics
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from html import unescape
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from generator.base import LLMSettings
from generator.errors import GenerationError
from generator.reading_rate import measure_reading_rate

ROOT = Path(__file__).resolve().parent.parent
FINAL = ("done", "failed", "cancelled")
PAGES = ("ask", "history", "question", "index")
# What each simulated user does, in this order: the later three act on its answered question.
ACTIONS = ("ask", "follow-up", "recheck", "deep-check")
RESULTS = ("answered", "refused", "failed", "unfinished", "skipped")
CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken"\s+value="([^"]+)"')
ALERT = re.compile(r'<p class="form-error" role="alert">(.*?)</p>', re.S)
QUESTION_URL = re.compile(r"/questions/(\d+)/$")
# The answer page's open follow-up (templates/qa/follow_up_form.html): the JSON its script polls, the form that asks.
DRAFT_JSON = re.compile(r'id="follow-up-draft" data-json-url="(/questions/\d+/follow-ups/(\d+)\.json)"')
DRAFT_ASK = re.compile(r'action="(/questions/\d+/follow-ups/\d+/ask)"')
# Generic enough for any answered BioASQ question; the model rewrites it into a standalone question.
FOLLOW_UP_TEXT = "What do the most recent studies add to this?"
# The follow-up section's script stops waiting for the rewrite after this long (static/follow-up.js GIVE_UP_MS) and
# the person asks the proposal as it stands; the default of --rewrite-wait does the same.
PAGE_REWRITE_WAIT_SECONDS = 180.0
# The site shows work that stopped moving (its worker died, the broker lost its task) as failed, with a reason that
# says so (webapp/qa/models.py question_lost_reason, webapp/deepcheck/selectors.py lost_reason).
SITE_SAYS_LOST = "so it was lost"


def require_loopback(url: str) -> str:
    """The URL without a trailing slash, if it points at this machine; a load generator must not aim elsewhere."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) URL: {url!r}")
    host = parts.hostname
    if host != "localhost":
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False  # a name could resolve anywhere
        if not loopback:
            raise ValueError(f"refusing a non-loopback host {host!r}: use 127.0.0.1, ::1 or localhost")
    return url.rstrip("/")


def percentile(values: list[float], pct: float) -> float | None:
    """Nearest-rank percentile (p95 of 20 samples is the 19th smallest); None without samples."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(pct / 100 * len(ordered)) - 1)]


@dataclass
class Outcome:
    """One user's action of one `kind` (ACTIONS): `answered` (its work ended done: the question answered, the
    re-check stored, the deep check done), `refused` (the site said no, with a message), `failed`, `unfinished`:
    accepted, but still queued or running when the `--timeout` bound ended, or `skipped`: an action after asking
    whose question did not end answered (`message` says how it ended). `last_status` is the status its JSON showed
    last: the final one for finished work, where it was for unfinished work. An unfinished action is not lost; a
    longer bound or a look at the site afterwards tells whether it finished. `end_status` and `end_state` are what
    the look once more after the bound found (`final`, `running`, `lost`, or `not visible`: a re-check not stored
    yet, which the site shows no queued or running state for). `asked_at` is when the action's first form was
    posted, `finished_at` when its work was seen final."""

    user: str
    kind: str = "ask"
    result: str = "failed"
    question_id: int | None = None  # the question it created: asking's, or the follow-up's
    on_question: int | None = None  # the answered question the actions after asking act on
    draft_id: int | None = None  # the follow-up on its way to a question (rewritten by the model)
    accepted: bool = False  # the site took the work: a question, a rewrite, a re-check or a deep check was queued
    rechecks_before: int = 0  # the re-checks on request the question's JSON listed before "Re-check now"
    http_status: int | None = None
    message: str = ""
    last_status: str = ""
    max_queue_position: int | None = None
    asked_at: float = 0.0
    finished_at: float | None = None
    end_status: str = ""
    end_state: str = ""


@dataclass(frozen=True)
class PageSample:
    page: str
    started_at: float
    ms: float
    status: int


def json_status(data: dict[str, Any]) -> str:
    return str(data.get("status") or "none")  # a question never deep-checked has status null


def manual_rechecks(data: dict[str, Any]) -> int:
    """The re-checks on request a question's JSON lists (webapp/watch/selectors.py question_watch_payload): the
    only sign that one ran, since a re-check is stored only once it has (webapp/watch/services.py question_recheck)."""
    return sum(1 for recheck in data.get("rechecks", []) if recheck.get("trigger") == "manual")


@dataclass(frozen=True)
class Tracking:
    """Where accepted work shows how far it is: its JSON, the statuses that end it (`done` the one that counts as
    answered), those that show it queued or running, and those that show nothing either way (`hidden`)."""

    path: str
    final: tuple[str, ...]
    running: tuple[str, ...]
    done: str = "done"
    hidden: tuple[str, ...] = ()
    status_of: Callable[[dict[str, Any]], str] = json_status


def question_tracking(question_id: int) -> Tracking:
    return Tracking(f"/questions/{question_id}.json", FINAL, ("queued", "retrieving", "generating", "verifying"))


def draft_tracking(question_id: int, draft_id: int) -> Tracking:
    """A follow-up's rewrite: `proposed` or `fallback` once it ran (or could not), `asked` once asked."""
    path = f"/questions/{question_id}/follow-ups/{draft_id}.json"
    return Tracking(path, ("proposed", "fallback", "asked"), ("rewriting",), done="proposed")


def recheck_tracking(question_id: int, before: int) -> Tracking:
    """Stored once one more re-check on request is listed than before the click; until then nothing shows whether
    it waits in the queue, runs, or was lost."""

    def status_of(data: dict[str, Any]) -> str:
        return "stored" if manual_rechecks(data) > before else "not stored"

    return Tracking(
        f"/questions/{question_id}.json", ("stored",), (), done="stored", hidden=("not stored",), status_of=status_of
    )


def deep_check_tracking(question_id: int) -> Tracking:
    return Tracking(f"/questions/{question_id}/deep-check.json", ("done", "failed", "stopped"), ("queued", "running"))


def tracking(outcome: Outcome) -> Tracking | None:
    """How to follow the work the site accepted for this action; None when it accepted none."""
    if outcome.question_id is not None:  # asking, or a follow-up once asked
        return question_tracking(outcome.question_id)
    if not outcome.accepted or outcome.on_question is None:
        return None
    if outcome.kind == "follow-up" and outcome.draft_id is not None:
        return draft_tracking(outcome.on_question, outcome.draft_id)
    if outcome.kind == "recheck":
        return recheck_tracking(outcome.on_question, outcome.rechecks_before)
    if outcome.kind == "deep-check":
        return deep_check_tracking(outcome.on_question)
    return None


def work_state(track: Tracking, status: str, error: str = "") -> str:
    """`final`, `running`, `not visible` or `lost`: any status that neither ends the work nor shows it queued or
    running (an unknown one, a page that is gone), and work the site itself reports lost as failed."""
    if status in track.final:
        return "lost" if SITE_SAYS_LOST in error else "final"
    if status in track.running:
        return "running"
    return "not visible" if status in track.hidden else "lost"


def item_name(outcome: Outcome) -> str:
    """The accepted work, by the ids the site shows it under."""
    if outcome.question_id is not None:
        return f"question {outcome.question_id}"
    if outcome.kind == "follow-up":
        return f"follow-up draft {outcome.draft_id} of question {outcome.on_question}"
    return f"{outcome.kind.replace('-', ' ')} of question {outcome.on_question}"


def was_created(outcome: Outcome) -> bool:
    return outcome.accepted or outcome.question_id is not None


def seconds_taken(outcomes: list[Outcome]) -> float | None:
    """Median seconds from posting the first form to seeing the work done, over the answered ones."""
    taken = [o.finished_at - o.asked_at for o in outcomes if o.result == "answered" and o.finished_at is not None]
    return round(statistics.median(taken), 1) if taken else None


def action_summary(outcomes: list[Outcome]) -> dict[str, Any]:
    """One kind's counts; its messages are the distinct reasons given for each refused, failed or skipped one."""
    positions = [o.max_queue_position for o in outcomes if o.max_queue_position is not None]
    return {
        **{result: sum(1 for o in outcomes if o.result == result) for result in RESULTS},
        "created": sum(1 for o in outcomes if was_created(o)),
        "median_seconds": seconds_taken(outcomes),
        "max_queue_position": max(positions, default=None),
        "messages": sorted({o.message for o in outcomes if o.result in ("refused", "failed", "skipped") and o.message}),
    }


def end_items(outcomes: list[Outcome], state: str) -> list[dict[str, str]]:
    """The accepted work the look after the bound found in `state`, each with who did it and its status then."""
    return [
        {"user": o.user, "action": o.kind, "item": item_name(o), "status": o.end_status}
        for o in outcomes
        if o.end_state == state
    ]


def summarise(outcomes: list[Outcome], samples: list[PageSample], *, started_at: float) -> dict[str, Any]:
    """The figures the table shows. The top-level counts are asking's, as before the other actions were added, so
    older reports compare. "Busy" is from the moment the questions were posted until the last work of any action
    finished; `questions_per_minute` counts the answered questions over asking's own part of it."""
    asks = [o for o in outcomes if o.kind == "ask"]
    finished = [o.finished_at for o in outcomes if o.finished_at is not None]
    busy_until = max(finished, default=started_at)
    asked_until = max((o.finished_at for o in asks if o.finished_at is not None), default=started_at)
    busy = [s for s in samples if started_at <= s.started_at <= busy_until]
    idle = [s.ms for s in samples if s.started_at < started_at]
    counts = {
        kind: sum(1 for o in asks if o.result == kind) for kind in ("answered", "refused", "failed", "unfinished")
    }
    minutes = (asked_until - started_at) / 60
    positions = [o.max_queue_position for o in outcomes if o.max_queue_position is not None]
    lost = end_items(outcomes, "lost")
    not_visible = end_items(outcomes, "not visible")
    return {
        "asked": len(asks),
        **counts,
        "created": sum(1 for o in asks if o.question_id is not None),
        "refusal_messages": sorted({o.message for o in asks if o.result == "refused"}),
        "failure_messages": sorted({o.message for o in asks if o.result == "failed"}),
        "unfinished_by_status": {
            status: sum(1 for o in asks if o.result == "unfinished" and o.last_status == status)
            for status in sorted({o.last_status for o in asks if o.result == "unfinished"})
        },
        "by_action": {
            kind: action_summary([o for o in outcomes if o.kind == kind])
            for kind in ACTIONS
            if any(o.kind == kind for o in outcomes)
        },
        "lost": len(lost),
        "lost_items": lost,
        "not_visible": len(not_visible),
        "not_visible_items": not_visible,
        "busy_seconds": round(busy_until - started_at, 1),
        "asking_seconds": round(asked_until - started_at, 1),
        "questions_per_minute": round(counts["answered"] / minutes, 2) if minutes > 0 else None,
        "max_queue_position": max(positions, default=None),
        "page_p50_ms_idle": percentile(idle, 50),
        "page_samples_busy": len(busy),
        "page_errors_busy": sum(1 for s in busy if s.status != 200),
        "page_p50_ms": percentile([s.ms for s in busy], 50),
        "page_p95_ms": percentile([s.ms for s in busy], 95),
        "page_p95_ms_by_page": {
            page: percentile([s.ms for s in busy if s.page == page], 95)
            for page in PAGES
            if any(s.page == page for s in busy)
        },
    }


class Browser:
    """One signed-in person. Cookies are kept by hand: the production profile marks them Secure, which a cookie jar
    would withhold over the plain http of loopback. With `tls_proxy` it adds what the TLS proxy in front of
    production adds (X-Forwarded-Proto), so the site neither redirects to https nor fails the CSRF origin check."""

    def __init__(self, base: str, *, tls_proxy: bool) -> None:
        self.base = base
        self.tls_proxy = tls_proxy
        self.cookies: dict[str, str] = {}
        host = urlsplit(base).netloc
        origin = f"https://{host}" if tls_proxy else base
        self.headers = {"Origin": origin, "Referer": origin + "/"}
        if tls_proxy:
            self.headers["X-Forwarded-Proto"] = "https"
        self.client = httpx.Client(base_url=base, timeout=60.0, follow_redirects=False)

    def tab(self) -> Browser:
        """Another tab of the same signed-in person: the session's cookies as they are now, with a connection and
        cookies of its own from then on, so actions run side by side without sharing a client between threads."""
        tab = Browser(self.base, tls_proxy=self.tls_proxy)
        tab.cookies = dict(self.cookies)
        return tab

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        cookie = "; ".join(f"{name}={value}" for name, value in self.cookies.items())
        headers = {**self.headers, **({"Cookie": cookie} if cookie else {})}
        response = self.client.request(method, path, headers=headers, **kwargs)
        for header in response.headers.get_list("set-cookie"):
            name, _, rest = header.partition("=")
            self.cookies[name.strip()] = rest.split(";", 1)[0]
        return response

    def form_post(self, path: str, data: dict[str, str], *, page: str | None = None) -> httpx.Response:
        """Posts a form to `path` with the CSRF token of the page that carries it: `path` itself, or `page` for a
        form whose action is elsewhere (the answer page's follow-up, watch and deep check forms)."""
        shown = page or path
        response = self.request("GET", shown)
        match = CSRF_INPUT.search(response.text)
        if response.status_code != 200 or not match:
            raise RuntimeError(f"GET {shown} gave {response.status_code} without a CSRF token")
        return self.request("POST", path, data={**data, "csrfmiddlewaretoken": match.group(1)})

    def sign_in(self, username: str, password: str) -> None:
        response = self.form_post("/accounts/login/", {"username": username, "password": password})
        if response.status_code != 302:
            raise RuntimeError(f"signing in as {username} failed ({response.status_code})")


def shown_message(response: httpx.Response) -> str:
    """What the site said on a page that did not take the form: the form's alert (the ask page, the follow-up
    section, a refusal page), a plain-text answer (the deep check's 403 and 409), or the status and where it led."""
    alert = ALERT.search(response.text)
    if alert:
        return unescape(alert.group(1)).strip()
    if response.headers.get("content-type", "").startswith("text/plain") and response.text.strip():
        return response.text.strip()[:300]
    return f"HTTP {response.status_code} {response.headers.get('location', '')}".strip()


def record_refusal(outcome: Outcome, response: httpx.Response) -> None:
    """A form the site did not take: refused when it said so with 429 (a person's hourly limit) or 503 (a full
    queue, a broker down), failed otherwise."""
    outcome.http_status = response.status_code
    outcome.message = shown_message(response)
    outcome.result = "refused" if response.status_code in (429, 503) else "failed"


def back_on_answer(response: httpx.Response, question_id: int) -> bool:
    """The answer page's forms redirect back to it once they took the work (a fragment such as #follow-up aside)."""
    location = urlsplit(response.headers.get("location", "")).path
    return response.status_code == 302 and location == f"/questions/{question_id}/"


def note_position(outcome: Outcome, data: dict[str, Any]) -> None:
    position = data.get("queue_position")
    if isinstance(position, int):
        outcome.max_queue_position = max(position, outcome.max_queue_position or 0)


def follow_status(browser: Browser, outcome: Outcome, track: Tracking, *, deadline: float,
                  poll_seconds: float) -> tuple[dict[str, Any] | None, bool]:  # fmt: skip
    """Polls the work's JSON until its status is final or `deadline` passes, noting the last status and the highest
    queue position seen; the last JSON read (None if none could be) and whether its status was final."""
    last: dict[str, Any] | None = None
    while time.time() < deadline:
        try:
            data = browser.request("GET", track.path).json()
            status = track.status_of(data)
        except Exception:  # a slow or failed poll is retried until the deadline
            time.sleep(poll_seconds)
            continue
        last = data
        outcome.last_status = status
        note_position(outcome, data)
        if status in track.final:
            return data, True
        time.sleep(poll_seconds)
    return last, False


def follow_to_end(browser: Browser, outcome: Outcome, *, deadline: float, poll_seconds: float) -> None:
    """Follows the accepted work until it is final (answered when it ended done, failed otherwise, with the error
    its JSON gives) or the deadline passes (unfinished)."""
    track = tracking(outcome)
    if track is None:
        return
    outcome.result = "unfinished"  # until the work is seen finished
    data, final = follow_status(browser, outcome, track, deadline=deadline, poll_seconds=poll_seconds)
    if final and data is not None:
        outcome.finished_at = time.time()
        outcome.result = "answered" if outcome.last_status == track.done else "failed"
        outcome.message = str(data.get("error", ""))


def created_question(response: httpx.Response) -> int | None:
    """The question a form post created: the answer page it redirects to; None when the site said no."""
    created = QUESTION_URL.search(response.headers.get("location", "")) if response.status_code == 302 else None
    return int(created.group(1)) if created else None


def ask_and_follow(browser: Browser, outcome: Outcome, question: str, *, go: threading.Barrier, deadline: float,
                   poll_seconds: float) -> None:  # fmt: skip
    try:
        go.wait()
        outcome.asked_at = time.time()
        response = browser.form_post("/", {"question": question})
    except Exception as exc:  # any failure to ask is reported, not raised from a thread
        outcome.message = f"{type(exc).__name__}: {exc}"
        return
    outcome.http_status = response.status_code
    outcome.question_id = created_question(response)
    if outcome.question_id is None:
        record_refusal(outcome, response)
        return
    outcome.accepted = True
    follow_to_end(browser, outcome, deadline=deadline, poll_seconds=poll_seconds)


def draft_on_page(html: str) -> tuple[int, str, str] | None:
    """The open follow-up on an answer page: its id, the JSON its script polls and the form that asks it."""
    json_path, ask_path = DRAFT_JSON.search(html), DRAFT_ASK.search(html)
    if json_path is None or ask_path is None:
        return None
    return int(json_path.group(2)), json_path.group(1), ask_path.group(1)


def follow_up(browser: Browser, outcome: Outcome, parent: int, *, deadline: float, poll_seconds: float,
              rewrite_wait: float) -> None:  # fmt: skip
    """Start a follow-up, wait for its rewrite as the page does (at most `rewrite_wait`), ask the proposal as it
    stands then, and follow the new question to its end. The start is model work (the rewrite), so it is accepted
    or refused as any is; asking the proposal is a question, and refused as any can be."""
    page = f"/questions/{parent}/"
    outcome.asked_at = time.time()
    response = browser.form_post(f"/questions/{parent}/follow-up", {"follow_up": FOLLOW_UP_TEXT}, page=page)
    outcome.http_status = response.status_code
    if not back_on_answer(response, parent):
        record_refusal(outcome, response)
        return
    shown = draft_on_page(browser.request("GET", page).text)
    if shown is None:
        outcome.message = "the answer page shows no follow-up after starting one"
        return
    outcome.draft_id, _, ask_path = shown
    outcome.accepted = True
    outcome.result = "unfinished"  # until the question it becomes is seen finished
    track = tracking(outcome)
    assert track is not None  # a draft of an accepted follow-up
    until = min(deadline, time.time() + rewrite_wait)
    draft, _ = follow_status(browser, outcome, track, deadline=until, poll_seconds=poll_seconds)
    if draft is None or time.time() >= deadline:
        return  # unfinished: still rewriting (or unreadable) at the bound
    response = browser.form_post(ask_path, {"question": str(draft["proposal"])}, page=page)
    outcome.http_status = response.status_code
    outcome.question_id = created_question(response)
    if outcome.question_id is None:
        record_refusal(outcome, response)
        return
    follow_to_end(browser, outcome, deadline=deadline, poll_seconds=poll_seconds)


def recheck(browser: Browser, outcome: Outcome, question_id: int, *, deadline: float, poll_seconds: float) -> None:
    """Press "Watch this answer", then "Re-check now", then wait until the re-check is stored. Both forms redirect
    back to the answer whether or not they did anything (webapp/watch/views.py: watching needs an answered question,
    re-checking a watched one), so the JSON is read in between: watched, and how many re-checks it lists."""
    page = f"/questions/{question_id}/"
    outcome.asked_at = time.time()
    response = browser.form_post(f"/questions/{question_id}/watch", {}, page=page)
    state = (
        browser.request("GET", f"/questions/{question_id}.json").json() if back_on_answer(response, question_id) else {}
    )
    if not state.get("watched"):
        outcome.http_status = response.status_code
        outcome.message = f"watching did not take (HTTP {response.status_code})"
        return
    outcome.rechecks_before = manual_rechecks(state)
    response = browser.form_post(f"/questions/{question_id}/recheck", {}, page=page)
    outcome.http_status = response.status_code
    if not back_on_answer(response, question_id):
        record_refusal(outcome, response)
        return
    outcome.accepted = True
    follow_to_end(browser, outcome, deadline=deadline, poll_seconds=poll_seconds)


def deep_check(browser: Browser, outcome: Outcome, question_id: int, *, deadline: float,
               poll_seconds: float) -> None:  # fmt: skip
    """The Deep check button (its form's `rerun` is empty before a first run), then its JSON until it is final."""
    outcome.asked_at = time.time()
    page = f"/questions/{question_id}/"
    response = browser.form_post(f"/questions/{question_id}/deep-check", {"rerun": ""}, page=page)
    outcome.http_status = response.status_code
    if not back_on_answer(response, question_id):
        record_refusal(outcome, response)
        return
    outcome.accepted = True
    follow_to_end(browser, outcome, deadline=deadline, poll_seconds=poll_seconds)


def skip_reason(ask: Outcome) -> str:
    """Why the actions after asking did not run: how the question ended, as the asking outcome says."""
    how = f"{ask.result} ({ask.last_status})" if ask.result == "unfinished" and ask.last_status else ask.result
    return f"its question was not answered: {how}" + (f": {ask.message}" if ask.message else "")


def act(browser: Browser, outcome: Outcome, question_id: int, *, deadline: float, poll_seconds: float,
        rewrite_wait: float) -> None:  # fmt: skip
    """One action after asking, in a tab of its own; any failure is reported, not raised from a thread."""
    outcome.on_question = question_id
    timing = {"deadline": deadline, "poll_seconds": poll_seconds}
    try:
        if outcome.kind == "follow-up":
            follow_up(browser, outcome, question_id, rewrite_wait=rewrite_wait, **timing)
        elif outcome.kind == "recheck":
            recheck(browser, outcome, question_id, **timing)
        else:
            deep_check(browser, outcome, question_id, **timing)
    except Exception as exc:  # the result stays as far as it got: failed before the site took the work
        outcome.message = f"{type(exc).__name__}: {exc}"


def user_run(browser: Browser, outcomes: list[Outcome], question: str, *, go: threading.Barrier, deadline: float,
             poll_seconds: float, rewrite_wait: float) -> None:  # fmt: skip
    """One user: ask (outcomes[0]) at the same instant as the others, then, once answered, the other actions
    (outcomes[1:]) side by side, each in its own tab, as a person who opens them one after another without waiting."""
    ask, later = outcomes[0], outcomes[1:]
    ask_and_follow(browser, ask, question, go=go, deadline=deadline, poll_seconds=poll_seconds)
    if ask.result != "answered" or ask.question_id is None:
        for outcome in later:
            outcome.result, outcome.message = "skipped", skip_reason(ask)
        return
    timing = {"deadline": deadline, "poll_seconds": poll_seconds, "rewrite_wait": rewrite_wait}
    threads = [
        threading.Thread(target=act, args=(browser.tab(), outcome, ask.question_id), kwargs=timing) for outcome in later
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def look_once_more(browser: Browser, outcome: Outcome) -> None:
    """After the bound: where the accepted work is now. Unreadable (the page gone, the site not answering) counts
    as lost, with what the site answered as its status."""
    track = tracking(outcome)
    if track is None:
        return
    try:
        response = browser.request("GET", track.path)
        data = response.json() if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError) as exc:
        outcome.end_status, outcome.end_state = f"unreadable: {type(exc).__name__}", "lost"
        return
    if data is None:
        outcome.end_status, outcome.end_state = f"HTTP {response.status_code}", "lost"
        return
    outcome.end_status = track.status_of(data)
    outcome.end_state = work_state(track, outcome.end_status, str(data.get("error", "")))


def parse_actions(text: str) -> tuple[str, ...]:
    """`--actions`: a comma-separated subset of ACTIONS, in their order; asking is the one the others build on."""
    chosen = {name.strip() for name in text.split(",") if name.strip()}
    unknown = chosen - set(ACTIONS)
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown action {', '.join(sorted(unknown))}: choose from {','.join(ACTIONS)}"
        )
    if "ask" not in chosen:
        raise argparse.ArgumentTypeError("follow-up, recheck and deep-check act on the answered question: include ask")
    return tuple(action for action in ACTIONS if action in chosen)


def watch_pages(browser: Browser, samples: list[PageSample], outcomes: list[Outcome], *, admin: bool,
                stop: threading.Event, pause: float, turns: int | None = None) -> None:  # fmt: skip
    """Opens the pages in turn until `stop` is set, or for `turns` turns when given."""
    for turn in range(turns if turns is not None else sys.maxsize):
        if turns is None and stop.is_set():
            return
        page = PAGES[turn % len(PAGES)]
        asked = [o.question_id for o in outcomes if o.question_id is not None]
        path = {"ask": "/", "history": "/history/", "index": "/index/"}.get(page)
        if page == "question":
            path = f"/questions/{asked[turn % len(asked)]}/" if asked else None
        if path is None or (page == "index" and not admin):
            continue
        started = time.time()
        try:
            status = browser.request("GET", path).status_code
        except httpx.HTTPError:
            status = 0
        samples.append(PageSample(page, started, (time.time() - started) * 1000, status))
        stop.wait(pause)


def make_accounts(users: int) -> tuple[list[tuple[str, str]], tuple[str, str]]:
    """Researchers load-user-1..N and one load-admin, with a fresh random password each run."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
    sys.path.insert(0, str(ROOT))
    import io

    import django

    django.setup()
    from django.core.management import call_command

    password = secrets.token_urlsafe(16)
    researchers = [(f"load-user-{index}", password) for index in range(1, users + 1)]
    for name, _ in researchers:
        call_command("user_create", name, "--role", "researcher", "--password", password, stdout=io.StringIO())
    call_command("user_create", "load-admin", "--role", "admin", "--password", password, stdout=io.StringIO())
    return researchers, ("load-admin", password)


def read_pairs(text: str) -> list[tuple[str, str]]:
    pairs = [line.strip().split(":", 1) for line in text.splitlines() if line.strip() and not line.startswith("#")]
    return [(name, password) for name, password in pairs]


def load_questions(path: Path, count: int) -> list[str]:
    bodies = [json.loads(line)["body"] for line in path.read_text().splitlines() if line.strip()]
    return [bodies[index % len(bodies)] for index in range(count)]


def print_table(summary: dict[str, Any]) -> None:
    rows = [(key, value) for key, value in summary.items() if not key.endswith(("_messages", "_items", "by_action"))]
    width = max(len(key) for key, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
    for kind, counts in summary["by_action"].items():
        figures = "  ".join(f"{name} {value}" for name, value in counts.items() if name != "messages")
        print(f"{kind:<{width}}  {figures}")
        for message in counts["messages"]:
            print(f"{kind}: {message}")
    for state in ("lost", "not_visible"):
        for item in summary[f"{state}_items"]:
            print(f"{state.replace('_', ' ')}: {item['item']} ({item['user']}, {item['action']}): {item['status']}")
    for message in summary["refusal_messages"]:
        print(f"refused: {message}")
    for message in summary["failure_messages"]:
        print(f"failed: {message}")


def probe_rate(url: str, model: str) -> float | None:
    """The LLM server's prompt-reading rate (generator.reading_rate); None, with a line saying why, when it cannot
    be measured (a remote or unreachable server): questions/min says little without it."""
    try:
        require_loopback(url)
        return measure_reading_rate(LLMSettings(base_url=url, model=model, max_retries=0)).tokens_per_s
    except (ValueError, GenerationError) as exc:
        print(f"prompt-reading probe unavailable: {exc}", file=sys.stderr)
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=900, help="seconds to wait for all the work to finish")
    parser.add_argument("--poll-seconds", type=float, default=1.0, help="the page itself polls every 0.4 s")
    parser.add_argument("--page-pause", type=float, default=0.5, help="seconds between the watcher's page views")
    parser.add_argument("--accounts", type=Path, help="username:password lines instead of creating accounts")
    parser.add_argument("--admin", help="username:password of an admin for the watcher (with --accounts)")
    parser.add_argument("--idle-rounds", type=int, default=3, help="page views per page before the load starts")
    parser.add_argument("--tls-proxy", action="store_true", help="act as the TLS proxy production sits behind")
    parser.add_argument(
        "--actions",
        type=parse_actions,
        default=ACTIONS,
        help=f"comma-separated, from {','.join(ACTIONS)} (default: all); ask alone is the benchmark before the others",
    )
    parser.add_argument(
        "--rewrite-wait",
        type=float,
        default=PAGE_REWRITE_WAIT_SECONDS,
        help="seconds a follow-up waits for its rewrite before asking the proposal as it stands, as the page does",
    )
    data_dir = Path(os.environ.get("VERIMED_DATA_DIR", ROOT.parent / "shared" / "data"))
    parser.add_argument("--questions", type=Path, default=data_dir / "bioasq" / "benchmark" / "questions_dev.jsonl")
    parser.add_argument("--out", type=Path, default=Path("var/benchmarks/load.json"))
    parser.add_argument(
        "--llm-url",
        default=os.environ.get("VERIMED_LLM_BASE_URL", "http://127.0.0.1:8081/v1"),
        help="the site's LLM server, probed for its prompt-reading rate before and after the load",
    )
    parser.add_argument("--llm-model", default=os.environ.get("VERIMED_LLM_MODEL", "qwen2.5-coder-1.5b-instruct"))
    args = parser.parse_args()

    try:
        base = require_loopback(args.url)
    except ValueError as exc:
        parser.error(str(exc))
    questions = load_questions(args.questions, args.users)
    if args.accounts:
        researchers = read_pairs(args.accounts.read_text())[: args.users]
        if len(researchers) < args.users:
            parser.error(f"--accounts has {len(researchers)} accounts for {args.users} users")
        watcher_account = read_pairs(args.admin)[0] if args.admin else researchers[0]
    else:
        researchers, watcher_account = make_accounts(args.users)
    is_admin = not args.accounts or bool(args.admin)
    probes = [probe_rate(args.llm_url, args.llm_model)]

    browsers = [Browser(base, tls_proxy=args.tls_proxy) for _ in researchers]
    for browser, (name, password) in zip(browsers, researchers, strict=True):
        browser.sign_in(name, password)
    watcher = Browser(base, tls_proxy=args.tls_proxy)
    watcher.sign_in(*watcher_account)

    plans = [[Outcome(user=name, kind=kind) for kind in args.actions] for name, _ in researchers]
    outcomes = [outcome for plan in plans for outcome in plan]
    samples: list[PageSample] = []
    # A few views on the idle site first, as the yardstick for the figures under load.
    for _ in range(args.idle_rounds):
        watch_pages(watcher, samples, outcomes, admin=is_admin, stop=threading.Event(), pause=0, turns=len(PAGES))
    stop = threading.Event()
    go = threading.Barrier(len(browsers))
    deadline = time.time() + args.timeout
    started_at = time.time()
    timing = {"go": go, "deadline": deadline, "poll_seconds": args.poll_seconds, "rewrite_wait": args.rewrite_wait}
    users = [
        threading.Thread(target=user_run, args=(browser, plan, question), kwargs=timing)
        for browser, plan, question in zip(browsers, plans, questions, strict=True)
    ]
    pages = threading.Thread(
        target=watch_pages,
        args=(watcher, samples, outcomes),
        kwargs={"admin": is_admin, "stop": stop, "pause": args.page_pause},
    )
    pages.start()
    for thread in users:
        thread.start()
    for thread in users:
        thread.join()
    stop.set()
    pages.join()
    # Nothing accepted may be lost: each piece of work is looked at once more, by the person whose it is.
    for browser, plan in zip(browsers, plans, strict=True):
        for outcome in plan:
            look_once_more(browser, outcome)

    probes.append(probe_rate(args.llm_url, args.llm_model))
    summary = summarise(outcomes, samples, started_at=started_at)
    summary["probe_tokens_per_s"] = probes  # the LLM server's prompt-reading rate, before and after the load
    print_table(summary)
    machine = {"cpus": os.cpu_count(), "platform": platform.platform()}
    run = {
        "url": base,
        "users": args.users,
        "timeout_s": args.timeout,
        "poll_seconds": args.poll_seconds,
        "actions": list(args.actions),
        "rewrite_wait_s": args.rewrite_wait,
    }
    report = {
        "machine": machine,
        "run": run,
        "summary": summary,
        "outcomes": [asdict(o) for o in outcomes],
        "page_samples": [asdict(s) for s in samples],
        "page_p50_ms_by_page": {
            page: statistics.median([s.ms for s in samples if s.page == page])
            for page in PAGES
            if any(s.page == page for s in samples)
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    print(f"written: {args.out}")


if __name__ == "__main__":
    main()
