"""Many researchers asking at once against a running site: answered, refused cleanly, failed or still unfinished at
the time bound; page latency while the workers are busy.

    make run                                     # or the production profile: anything serving the site on loopback
    .venv/bin/python benchmarks/load.py --url http://127.0.0.1:8000 --users 20 --timeout 900

Each simulated user signs in as its own researcher account (created here with `manage.py user_create` against the
settings in this shell's environment, so export the same DATABASE_URL etc. as the site; or pass `--accounts FILE`
with `username:password` lines), and all of them post a BioASQ dev question at the same instant, through the ask
form with its CSRF token, as a browser would. Each then polls its question's JSON until it is finished or the
`--timeout` passes. Meanwhile one more signed-in user (an admin, so the index page is included) keeps opening
pages and records how long each took. Only loopback URLs are accepted: this is a load generator. The LLM server
(`--llm-url`, default `VERIMED_LLM_BASE_URL`) is probed for its prompt-reading rate before and after the load
(`probe_tokens_per_s`): questions/min mean little without it.
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
CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken"\s+value="([^"]+)"')
ALERT = re.compile(r'<p class="form-error" role="alert">(.*?)</p>', re.S)
QUESTION_URL = re.compile(r"/questions/(\d+)/$")


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
    """One user's question: `answered`, `refused` (the site said no, with a message), `failed`, or `unfinished`:
    created, but still queued or running when the `--timeout` bound ended. `last_status` is the status its JSON
    showed last: the final one for a finished question, where it was for an unfinished one. An unfinished question
    is not lost; a longer bound or a look at the site afterwards tells whether it finished."""

    user: str
    result: str = "failed"
    question_id: int | None = None
    http_status: int | None = None
    message: str = ""
    last_status: str = ""
    max_queue_position: int | None = None
    asked_at: float = 0.0
    finished_at: float | None = None


@dataclass(frozen=True)
class PageSample:
    page: str
    started_at: float
    ms: float
    status: int


def summarise(outcomes: list[Outcome], samples: list[PageSample], *, started_at: float) -> dict[str, Any]:
    """The figures the table shows. "Busy" is from the moment the questions were posted until the last finished."""
    finished = [o.finished_at for o in outcomes if o.finished_at is not None]
    busy_until = max(finished, default=started_at)
    busy = [s for s in samples if started_at <= s.started_at <= busy_until]
    idle = [s.ms for s in samples if s.started_at < started_at]
    kinds = ("answered", "refused", "failed", "unfinished")
    counts = {kind: sum(1 for o in outcomes if o.result == kind) for kind in kinds}
    minutes = (busy_until - started_at) / 60
    positions = [o.max_queue_position for o in outcomes if o.max_queue_position is not None]
    return {
        "asked": len(outcomes),
        **counts,
        "created": sum(1 for o in outcomes if o.question_id is not None),
        "refusal_messages": sorted({o.message for o in outcomes if o.result == "refused"}),
        "failure_messages": sorted({o.message for o in outcomes if o.result == "failed"}),
        "unfinished_by_status": {
            status: sum(1 for o in outcomes if o.result == "unfinished" and o.last_status == status)
            for status in sorted({o.last_status for o in outcomes if o.result == "unfinished"})
        },
        "busy_seconds": round(busy_until - started_at, 1),
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
        self.cookies: dict[str, str] = {}
        host = urlsplit(base).netloc
        origin = f"https://{host}" if tls_proxy else base
        self.headers = {"Origin": origin, "Referer": origin + "/"}
        if tls_proxy:
            self.headers["X-Forwarded-Proto"] = "https"
        self.client = httpx.Client(base_url=base, timeout=60.0, follow_redirects=False)

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        cookie = "; ".join(f"{name}={value}" for name, value in self.cookies.items())
        headers = {**self.headers, **({"Cookie": cookie} if cookie else {})}
        response = self.client.request(method, path, headers=headers, **kwargs)
        for header in response.headers.get_list("set-cookie"):
            name, _, rest = header.partition("=")
            self.cookies[name.strip()] = rest.split(";", 1)[0]
        return response

    def form_post(self, path: str, data: dict[str, str]) -> httpx.Response:
        page = self.request("GET", path)
        match = CSRF_INPUT.search(page.text)
        if page.status_code != 200 or not match:
            raise RuntimeError(f"GET {path} gave {page.status_code} without a CSRF token")
        return self.request("POST", path, data={**data, "csrfmiddlewaretoken": match.group(1)})

    def sign_in(self, username: str, password: str) -> None:
        response = self.form_post("/accounts/login/", {"username": username, "password": password})
        if response.status_code != 302:
            raise RuntimeError(f"signing in as {username} failed ({response.status_code})")


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
    created = QUESTION_URL.search(response.headers.get("location", "")) if response.status_code == 302 else None
    if created is None:
        alert = ALERT.search(response.text)
        where = response.headers.get("location", "")
        outcome.message = unescape(alert.group(1)).strip() if alert else f"HTTP {response.status_code} {where}"
        outcome.result = "refused" if response.status_code in (429, 503) else "failed"
        return
    outcome.question_id = int(created.group(1))
    outcome.result = "unfinished"  # until the question is seen finished
    while time.time() < deadline:
        try:
            data = browser.request("GET", f"/questions/{outcome.question_id}.json").json()
        except Exception:  # a slow or failed poll is retried until the deadline
            time.sleep(poll_seconds)
            continue
        outcome.last_status = data["status"]
        position = data.get("queue_position")
        if position is not None:
            outcome.max_queue_position = max(position, outcome.max_queue_position or 0)
        if data["status"] in FINAL:
            outcome.finished_at = time.time()
            outcome.result = "answered" if data["status"] == "done" else "failed"
            outcome.message = data.get("error", "")
            return
        time.sleep(poll_seconds)


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
    rows = [(key, value) for key, value in summary.items() if not key.endswith("_messages")]
    width = max(len(key) for key, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
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
    parser.add_argument("--timeout", type=float, default=900, help="seconds to wait for all questions to finish")
    parser.add_argument("--poll-seconds", type=float, default=1.0, help="the page itself polls every 0.4 s")
    parser.add_argument("--page-pause", type=float, default=0.5, help="seconds between the watcher's page views")
    parser.add_argument("--accounts", type=Path, help="username:password lines instead of creating accounts")
    parser.add_argument("--admin", help="username:password of an admin for the watcher (with --accounts)")
    parser.add_argument("--idle-rounds", type=int, default=3, help="page views per page before the load starts")
    parser.add_argument("--tls-proxy", action="store_true", help="act as the TLS proxy production sits behind")
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

    outcomes = [Outcome(user=name) for name, _ in researchers]
    samples: list[PageSample] = []
    # A few views on the idle site first, as the yardstick for the figures under load.
    for _ in range(args.idle_rounds):
        watch_pages(watcher, samples, outcomes, admin=is_admin, stop=threading.Event(), pause=0, turns=len(PAGES))
    stop = threading.Event()
    go = threading.Barrier(len(browsers))
    deadline = time.time() + args.timeout
    started_at = time.time()
    askers = [
        threading.Thread(
            target=ask_and_follow,
            args=(browser, outcome, question),
            kwargs={"go": go, "deadline": deadline, "poll_seconds": args.poll_seconds},
        )
        for browser, outcome, question in zip(browsers, outcomes, questions, strict=True)
    ]
    pages = threading.Thread(
        target=watch_pages,
        args=(watcher, samples, outcomes),
        kwargs={"admin": is_admin, "stop": stop, "pause": args.page_pause},
    )
    pages.start()
    for thread in askers:
        thread.start()
    for thread in askers:
        thread.join()
    stop.set()
    pages.join()

    probes.append(probe_rate(args.llm_url, args.llm_model))
    summary = summarise(outcomes, samples, started_at=started_at)
    summary["probe_tokens_per_s"] = probes  # the LLM server's prompt-reading rate, before and after the load
    print_table(summary)
    machine = {"cpus": os.cpu_count(), "platform": platform.platform()}
    run = {"url": base, "users": args.users, "timeout_s": args.timeout, "poll_seconds": args.poll_seconds}
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
