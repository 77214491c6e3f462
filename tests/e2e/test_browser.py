"""In headless Chromium: hostile text stays inert, tokens reach the page fast, and Stop ends an answer.

The full ask → evidence → flag → review flow is in test_flows.py."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import ARTIFACTS, QUESTIONS, RunningStack, shot, sign_in

pytestmark = pytest.mark.e2e


def test_hostile_question_text_is_shown_inert(stack: RunningStack, page: Page) -> None:
    alerts: list[str] = []
    page.on("dialog", lambda dialog: (alerts.append(dialog.message), dialog.dismiss()))
    sign_in(page, stack, "researcher")
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
    sign_in(page, stack, "researcher")
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
    shot(page, "04-stopped")
