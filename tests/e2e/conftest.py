"""The whole stack, started the way `make run` starts it (site, Celery worker and LLM server processes), once on the
embedded default and once on the production profile's engines (profiles.py): every browser test runs on both."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from playwright.sync_api import Browser, Page, expect, sync_playwright

from tests.e2e.profiles import PROFILES, profile_env
from tests.support import REPO, TEST_LLM_MODEL, free_port, shared_data_dir

# Two BioASQ dev questions; their gold abstracts plus some others form the test corpus.
QUESTIONS = (
    "What is the mode of action of everolimus?",
    "Is lambrolizumab effective for treatment of patients with melanoma ?",
)
OTHER_ABSTRACTS = 150
STACK_ANSWER_TOKENS = 160
STACK_ABSTRACTS_IN_PROMPT = 2
PASSWORD = "e2e-password-not-secret"
# One person per role; the browser tests sign in as the one a flow needs.
USERS = {"researcher": "rita", "reviewer": "rene", "admin": "ada"}


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[pytest.TestReport]:
    """Keep each phase's report on the test item, so fixtures can tell in teardown whether the test failed."""
    report: pytest.TestReport = yield
    setattr(item, f"rep_{report.when}", report)
    return report


# An abstract written to attack the page: every field a page shows carries markup, handlers and javascript: links.
# Its made-up drug name makes it the top hit for HOSTILE_QUESTION on either profile.
HOSTILE_PMID = "99000001"
HOSTILE_MARKUP = (
    '<script>alert("script")</script><img src=x onerror="alert(\'img\')">'
    '[read more](javascript:alert("link")) <a href="javascript:alert(\'a\')">here</a>'
)
HOSTILE_ARTICLE = {
    "pmid": HOSTILE_PMID,
    "title": f"Zorvistatin lowers blood pressure {HOSTILE_MARKUP}",
    "abstract": (
        f"Zorvistatin lowered systolic blood pressure by 12 mmHg in 300 adults with hypertension. {HOSTILE_MARKUP} "
        "Zorvistatin was well tolerated over 24 weeks."
    ),
    "journal": "J Hypertens <svg onload=\"alert('journal')\">",
    "year": 2021,
    "authors": ['Doe J<script>alert("author")</script>'],
    "doi": "javascript:alert('doi')",
}
HOSTILE_QUESTION = "Does zorvistatin lower blood pressure?"


@dataclass(frozen=True)
class RunningStack:
    profile: str
    url: str
    env: dict[str, str]
    var_dir: Path
    gold_pmids: dict[str, list[str]]

    def manage(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=REPO, env=self.env, capture_output=True, text=True, timeout=timeout,
        )  # fmt: skip


def _write_corpus(target: Path) -> dict[str, list[str]]:
    """A small JSONL corpus from the shared BioASQ benchmark: the gold abstracts of QUESTIONS and some others."""
    benchmark = shared_data_dir() / "bioasq" / "benchmark"
    questions = [json.loads(line) for line in (benchmark / "questions_dev.jsonl").open()]
    gold = {q["body"]: q["gold_pmids"] for q in questions if q["body"] in QUESTIONS}
    wanted = {pmid for pmids in gold.values() for pmid in pmids}
    others = 0
    with gzip.open(benchmark / "corpus.jsonl.gz", "rt") as source, target.open("w") as out:
        for line in source:
            pmid = json.loads(line)["pmid"]
            if pmid in wanted or others < OTHER_ABSTRACTS:
                others += pmid not in wanted
                out.write(line)
        out.write(json.dumps(HOSTILE_ARTICLE) + "\n")
    return gold


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run a stack test on every profile, or on those its `profiles` marker names.

    Starting a stack and answering on it costs minutes: the browser flows run on the embedded default, and the
    production profile keeps the end-to-end `ask` and the researcher-to-reviewer flow (what differs between the
    profiles is below the page: the engines, the database and the broker). `VERIMED_E2E_PROFILES=production` (or
    any comma-separated list) runs every stack test on the profiles it names instead, for a check by hand.
    """
    if "stack" in metafunc.fixturenames:
        marker = metafunc.definition.get_closest_marker("profiles")
        forced = os.environ.get("VERIMED_E2E_PROFILES", "")
        profiles = tuple(name.strip() for name in forced.split(",") if name.strip()) or (
            marker.args if marker else PROFILES
        )
        metafunc.parametrize("stack", profiles, indirect=True, scope="session")


@pytest.fixture(scope="session")
def stack(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, llm_base_url: str
) -> Iterator[RunningStack]:
    """A stack on the profile the test is parametrized with, its questions answered by the session's LLM server
    (tests/conftest.py): each llama.cpp server costs a start, and what the stacks test is the same whichever process
    serves the model."""
    profile: str = request.param
    var_dir = tmp_path_factory.mktemp(f"stack-{profile}")
    with profile_env(profile, var_dir) as profile_vars:
        yield from started_stack(profile, var_dir, profile_vars, llm_url=llm_base_url)


def started_stack(
    profile: str, var_dir: Path, profile_vars: dict[str, str], *, llm_url: str | None = None
) -> Iterator[RunningStack]:
    """A stack on `profile` in `var_dir`, prepared as `make run` prepares it, stopped when the generator ends. With
    `llm_url`, its questions go to that running llama.cpp server; without, the stack starts its own (the restart
    drills kill it)."""
    corpus = var_dir / "corpus.jsonl"
    gold = _write_corpus(corpus)
    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "webapp.settings",
        "VERIMED_VAR_DIR": str(var_dir),
        "VERIMED_MODEL_CACHE": str(settings.VERIMED.paths.model_cache),
        "VERIMED_LLM_BASE_URL": llm_url or f"http://127.0.0.1:{free_port()}/v1",
        "VERIMED_LLM_MODEL": TEST_LLM_MODEL,
        # Short answers: every assertion holds on a few cited sentences, and each token costs the suite time.
        "VERIMED_LLM_MAX_TOKENS": str(STACK_ANSWER_TOKENS),
        # Two abstracts in the prompt rather than five: reading the prompt is most of an answer's time on machines
        # that read 30 tokens a second, and no stack test needs more than two given.
        "VERIMED_ABSTRACTS_IN_PROMPT": str(STACK_ABSTRACTS_IN_PROMPT),
        **profile_vars,
    }
    running = RunningStack(profile=profile, url=f"http://127.0.0.1:{port}", env=env, var_dir=var_dir, gold_pmids=gold)
    pubmed_xml = shared_data_dir() / "pubmed" / "xml" / "pubmed-29768149.xml"
    # The same preparation `make run` does, on a small corpus; the three people made by `user_create` in one process
    # (each manage.py start costs seconds).
    make_users = "; ".join(
        f"call_command('user_create', {name!r}, '--role', {role!r}, '--password', {PASSWORD!r})"
        for role, name in USERS.items()
    )
    for command in (
        ("migrate", "--noinput"),
        ("collectstatic", "--noinput"),
        ("ingest", "--no-progress", str(corpus), str(pubmed_xml)),
        ("shell", "-c", f"from django.core.management import call_command; {make_users}"),
    ):
        done = running.manage(*command)
        assert done.returncode == 0, done.stderr[-3000:]
    # A shared LLM server is left alone: the stack starts (and `stack stop` stops) everything else.
    only = [arg for name in ("worker", "web", "embedder") for arg in ("--only", name)] if llm_url else []
    started = running.manage("stack", "start", "--port", str(port), *only)
    if started.returncode != 0:
        logs = "\n".join(f"--- {log.name}\n{log.read_text()[-2000:]}" for log in (var_dir / "log").glob("*.log"))
        running.manage("stack", "stop")
        raise RuntimeError(f"stack did not start: {started.stderr}\n{logs}")
    try:
        yield running
    finally:
        running.manage("stack", "stop")


ARTIFACTS = REPO / "test-artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]  # fmt: skip


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        # Debian's Chromium: Playwright never downloads a browser here.
        launched = playwright.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser, request: pytest.FixtureRequest) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    opened = context.new_page()
    console: list[str] = []
    opened.on("console", lambda message: console.append(f"{message.type}: {message.text}"))
    opened.on("pageerror", lambda error: console.append(f"page error: {error}"))
    yield opened
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        # What the page showed and logged when the test failed, kept with the other artefacts.
        shot(opened, f"failed-{request.node.name}")
        (ARTIFACTS / f"failed-{request.node.name}.log").write_text("\n".join(console))
    context.close()


def shot(page: Page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


# `make screenshot` sets it: the browser test that reaches a finished answer saves the page there for the README.
SCREENSHOT_DIR_VARIABLE = "VERIMED_SCREENSHOT_DIR"


def readme_shot(page: Page, name: str) -> Path | None:
    """A full-page PNG of what `page` shows, as `name`.png in VERIMED_SCREENSHOT_DIR when that is set (else nothing).

    Reduced to 256 colours: the picture is committed, and a page of text and flat colours loses nothing visible."""
    folder = os.environ.get(SCREENSHOT_DIR_VARIABLE)
    if not folder:
        return None
    from PIL import Image  # only this hook needs it

    path = Path(folder) / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path), full_page=True, animations="disabled")
    with Image.open(path) as shot_image:
        reduced = shot_image.convert("RGB").quantize(colors=256)
    reduced.save(path, optimize=True)
    return path


def stop_question(page: Page) -> None:
    """Stop the question if it is still being answered, so the next test does not wait behind it for the worker."""
    stop = page.get_by_role("button", name="Stop")
    if stop.is_visible():
        stop.click()
        # The generation checks for Stop between tokens: while the model still reads its prompt, that takes a while.
        expect(page.locator("#question-view")).to_have_attribute("data-status", "cancelled", timeout=240_000)


def sign_in(page: Page, stack: RunningStack, role: str) -> None:
    """Sign in through the real form as the test person holding `role`, landing on the ask page."""
    page.goto(stack.url + "/accounts/login/?next=/")
    page.get_by_label("Username").fill(USERS[role])
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("button", name=f"Sign out ({USERS[role]})")).to_be_visible()


def question_json(page: Page, stack: RunningStack) -> dict[str, Any]:
    """The open answer page's own JSON (its `data-json-url`), fetched with the browser's session."""
    path = page.locator("#question-view").get_attribute("data-json-url")
    assert path
    data: dict[str, Any] = page.request.get(stack.url + path).json()
    return data
