"""In headless Chromium: ask on the page, watch it stream, see coloured cited sentences, open the evidence."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from tests.e2e.conftest import QUESTIONS, RunningStack
from tests.support import REPO

pytestmark = pytest.mark.e2e

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
        _shot(opened, f"failed-{request.node.name}")
        (ARTIFACTS / f"failed-{request.node.name}.log").write_text("\n".join(console))
    context.close()


def _shot(page: Page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def test_a_researcher_asks_and_sees_a_verified_cited_answer(stack: RunningStack, page: Page) -> None:
    page.goto(stack.url + "/")
    page.get_by_label("Your biomedical question").fill(QUESTIONS[1])
    page.get_by_role("button", name="Ask").click()
    view = page.locator("#question-view")
    expect(view).to_be_visible()
    # Tokens appear while the model writes, before verification finishes.
    expect(page.locator(".stages li.active")).to_have_count(1, timeout=60_000)
    expect(page.locator("#answer")).not_to_be_empty(timeout=240_000)
    _shot(page, "01-streaming")
    expect(view).to_have_attribute("data-status", "done", timeout=300_000)
    _shot(page, "02-verified-answer")

    sentences = page.locator("#answer .sentence")
    assert sentences.count() >= 1
    classes = " ".join(sentences.nth(i).get_attribute("class") or "" for i in range(sentences.count()))
    assert "verdict-" in classes
    expect(page.locator(".legend")).to_contain_text("Supported by the cited abstract")
    expect(page.locator("#sources li").first).to_be_visible()

    chips = page.locator("#answer button.chip")
    assert chips.count() >= 1, "the answer should cite at least one retrieved abstract"
    # A SUPPORT or CONTRADICT citation opens with its evidence marked; a NO_EVIDENCE one may mark nothing.
    decided = page.locator("#answer button.chip-SUPPORT, #answer button.chip-CONTRADICT")
    dialog = page.locator("#abstract-dialog")
    if decided.count():
        decided.first.click()
        expect(dialog).to_be_visible()
        expect(dialog.locator("mark.evidence").first).to_be_visible()
    else:
        chips.first.click()
        expect(dialog).to_be_visible()
        expect(dialog.locator("#abstract-body")).not_to_be_empty()
    _shot(page, "03-evidence-highlighted")


def test_hostile_question_text_is_shown_inert(stack: RunningStack, page: Page) -> None:
    alerts: list[str] = []
    page.on("dialog", lambda dialog: (alerts.append(dialog.message), dialog.dismiss()))
    page.goto(stack.url + "/")
    hostile = '<img src=x onerror="alert(1)"> <script>alert(2)</script>'
    page.get_by_label("Your biomedical question").fill("   ")
    page.get_by_role("button", name="Ask").click()
    expect(page.get_by_role("alert")).to_contain_text("Please type a question")
    page.get_by_label("Your biomedical question").fill(hostile)
    page.get_by_role("button", name="Ask").click()
    expect(page.locator("h1.question-text")).to_have_text(hostile)
    page.wait_for_timeout(1500)
    assert alerts == []
    assert page.locator("#question-view img").count() == 0


WATCH_FIRST_TEXT = """() => {
  const answer = document.getElementById("answer");
  window.firstTextAt = null;
  new MutationObserver(() => {
    if (window.firstTextAt === null && answer.textContent.trim()) window.firstTextAt = Date.now();
  }).observe(answer, { childList: true, subtree: true, characterData: true });
}"""


def test_tokens_reach_the_page_within_a_second_and_stop_ends_the_answer(stack: RunningStack, page: Page) -> None:
    page.goto(stack.url + "/")
    page.get_by_label("Your biomedical question").fill(QUESTIONS[0] + " Explain in detail.")
    page.get_by_role("button", name="Ask").click()
    page.wait_for_selector("#question-view")
    page.evaluate(WATCH_FIRST_TEXT)
    expect(page.locator("#answer")).not_to_be_empty(timeout=240_000)

    # The worker stamps the moment it wrote the first token; the page notes when it showed it (same clock).
    payload = page.request.get(stack.url + (page.locator("#question-view").get_attribute("data-json-url") or "")).json()
    shown_at_ms = page.evaluate("() => window.firstTextAt")
    written_at_ms = datetime.fromisoformat(payload["first_token_at"]).timestamp() * 1000
    lag_ms = shown_at_ms - written_at_ms
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "stream-lag.json").write_text(json.dumps({"first_token_lag_ms": round(lag_ms)}))
    assert -50 < lag_ms < 1500, f"the first token reached the page {lag_ms:.0f} ms after the worker wrote it"

    page.get_by_role("button", name="Stop").click()
    view = page.locator("#question-view")
    expect(view).to_have_attribute("data-status", "cancelled", timeout=10_000)
    expect(page.locator("#status-line")).to_contain_text("Stopped")
    expect(page.get_by_role("button", name="Stop")).to_be_hidden()
    expect(page.locator("#answer")).not_to_be_empty()  # the words written so far stay
    _shot(page, "04-stopped")
