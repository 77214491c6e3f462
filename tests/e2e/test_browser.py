"""In headless Chromium: hostile text (in questions, abstracts and model output) stays inert, tokens reach the page
fast, and Stop ends an answer.

The full ask → evidence → flag → review flow is in test_flows.py."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

import pytest
from django.conf import settings
from playwright.sync_api import Page, expect

from tests.e2e.conftest import (
    ARTIFACTS,
    HOSTILE_ARTICLE,
    HOSTILE_MARKUP,
    HOSTILE_PMID,
    HOSTILE_QUESTION,
    QUESTIONS,
    USERS,
    RunningStack,
    question_json,
    shot,
    sign_in,
    stop_question,
)
from verifier.bottom_line import load_bottom_line_rule
from webapp.qa.bottom_line_display import shown_bottom_line

pytestmark = pytest.mark.profiles("embedded")


# Anything the hostile text could have turned into, had it reached the page as markup.
INJECTED = ", ".join(
    [*(f"#question-view {tag}" for tag in ("img", "svg", "script", "iframe", "b")), "a[href^='javascript:']"]
)


def _watch_alerts(page: Page) -> list[str]:
    alerts: list[str] = []
    page.on("dialog", lambda dialog: (alerts.append(dialog.message), dialog.dismiss()))
    return alerts


def _assert_inert(page: Page, alerts: list[str], *, settle_ms: int = 500) -> None:
    page.wait_for_timeout(settle_ms)  # an onerror handler fires once the broken image has failed to load
    assert alerts == [], f"hostile text ran: {alerts}"
    assert page.locator(INJECTED).count() == 0, page.locator("#question-view").inner_html()[:3000]


def test_hostile_question_text_is_shown_inert(stack: RunningStack, page: Page) -> None:
    alerts = _watch_alerts(page)
    sign_in(page, stack, "researcher")
    hostile = '<img src=x onerror="alert(1)"> <script>alert(2)</script>'
    page.get_by_label("Your biomedical question").fill("   ")
    page.get_by_role("button", name="Ask").click()
    expect(page.get_by_role("alert")).to_contain_text("Please type a question")
    page.get_by_label("Your biomedical question").fill(hostile)
    page.get_by_role("button", name="Ask").click()
    expect(page.locator("h1.question-text")).to_have_text(hostile)
    # Stopped before the model starts reading its prompt, the question is cancelled on the spot and the worker is
    # free for the next test; the page keeps the question, and is checked after the stop as well as before.
    stop_question(page)
    _assert_inert(page, alerts, settle_ms=1500)


def test_hostile_abstract_is_shown_inert(stack: RunningStack, page: Page) -> None:
    """The real pipeline retrieves an abstract whose title, text, journal, author and DOI carry markup. The sources
    are listed once retrieval is done; the answer being written meanwhile is not what this test is about."""
    alerts = _watch_alerts(page)
    sign_in(page, stack, "researcher")
    page.get_by_label("Your biomedical question").fill(HOSTILE_QUESTION)
    page.get_by_role("button", name="Ask").click()

    source = page.locator("#sources li.source").filter(has_text="Zorvistatin lowers blood pressure")
    expect(source).to_have_count(1, timeout=240_000)
    expect(source.locator("button.link-button")).to_have_text(HOSTILE_ARTICLE["title"])
    expect(source).to_contain_text(HOSTILE_ARTICLE["authors"][0])
    # A DOI of "javascript:…" becomes a path on doi.org, never a link that runs.
    doi = source.get_by_role("link", name=re.compile("^DOI "))
    assert (doi.get_attribute("href") or "").startswith("https://doi.org/javascript")
    source.locator("button.link-button").click()
    dialog = page.locator("#abstract-dialog")
    expect(dialog.locator("#abstract-body")).to_have_text(HOSTILE_ARTICLE["abstract"])
    expect(dialog.locator("#abstract-meta")).to_contain_text(HOSTILE_ARTICLE["journal"])
    shot(page, f"hostile-abstract-{stack.profile}")
    _assert_inert(page, alerts)
    page.keyboard.press("Escape")
    stop_question(page)


# Model output is whatever the LLM wrote: here it is written into the question as the generation stage would, and
# the real verify stage (on the stack's worker) splits, parses and verifies it before the page shows it.
HOSTILE_ANSWER_SCRIPT = """
from django.contrib.auth.models import User
from webapp.qa.models import Question, RetrievedDocument
from webapp.qa.services.admission import question_create
from webapp.qa.tasks import question_verify_task
answer = {answer!r}
question = question_create(text="What does zorvistatin do?", user=User.objects.get(username={user!r}), enqueue=False)
Question.objects.filter(pk=question.pk).update(
    status="generating", answer_text=answer, answer_raw=answer, context={{"given": [{pmid!r}]}}
)
RetrievedDocument.objects.create(question=question, rank=1, pmid={pmid!r}, score=1.0, lexical_score=1.0,
                                 semantic_score=1.0)
question_verify_task.delay(question.pk)
print(question.pk)
"""


def test_hostile_model_output_is_shown_inert(stack: RunningStack, page: Page) -> None:
    answer = (
        f"Zorvistatin lowered systolic blood pressure by 12 mmHg {HOSTILE_MARKUP} (PUBMED:{HOSTILE_PMID}). "
        f"It was well tolerated <b onmouseover=\"alert('b')\">for weeks</b> (PUBMED:{HOSTILE_PMID})."
    )
    made = stack.manage(
        "shell", "-c", HOSTILE_ANSWER_SCRIPT.format(answer=answer, user=USERS["researcher"], pmid=HOSTILE_PMID)
    )
    assert made.returncode == 0, made.stderr[-3000:]
    question_id = int(made.stdout.split()[-1])

    alerts = _watch_alerts(page)
    sign_in(page, stack, "researcher")
    page.goto(f"{stack.url}/questions/{question_id}/")
    expect(page.locator("#question-view")).to_have_attribute("data-status", "done", timeout=120_000)
    sentences = page.locator("#answer .sentence")
    expect(sentences).to_have_count(2)
    expect(sentences.first).to_contain_text(HOSTILE_MARKUP)
    expect(sentences.nth(1)).to_contain_text("<b onmouseover=\"alert('b')\">for weeks</b>")
    expect(page.locator("#answer button.chip")).to_have_count(2)
    sentences.nth(1).hover()
    sentences.first.get_by_role("button", name=re.compile("Details")).click()
    panel = page.locator("#sentence-panel")
    expect(panel).to_be_visible()
    shot(page, f"hostile-model-output-{stack.profile}")
    _assert_inert(page, alerts)

    # The history lists the answer's text too.
    page.goto(f"{stack.url}/history/?q=zorvistatin")
    expect(page.locator("main")).to_contain_text("What does zorvistatin do?")
    _assert_inert(page, alerts)


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
    payload = question_json(page, stack)
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


MODEL_ALONE_QUESTION = "Zorvistatin in hypertension: worth the risk?"  # yes/no by its form; no claim can be read


def test_a_bottom_line_from_the_answer_models_reading_alone_is_said_as_such(stack: RunningStack, page: Page) -> None:
    """A title asked as a question has no claim for the verifier to check, so no abstract votes; the real verify
    stage asks the stack's LLM to read the closest abstract (the hostile one here), and the page says that this
    reading alone decided the bottom line, in the server's words, with no consensus meter. The shipped rule weighs
    that reading (`bottom_line.json`); one that did not would leave the question without a bottom line."""
    answer = f"Zorvistatin lowered systolic blood pressure by 12 mmHg (PUBMED:{HOSTILE_PMID})."
    made = stack.manage(
        "shell",
        "-c",
        HOSTILE_ANSWER_SCRIPT.format(answer=answer, user=USERS["researcher"], pmid=HOSTILE_PMID).replace(
            "What does zorvistatin do?", MODEL_ALONE_QUESTION
        ),
    )
    assert made.returncode == 0, made.stderr[-3000:]
    question_id = int(made.stdout.split()[-1])

    alerts = _watch_alerts(page)
    sign_in(page, stack, "researcher")
    page.goto(f"{stack.url}/questions/{question_id}/")
    expect(page.locator("#question-view")).to_have_attribute("data-status", "done", timeout=180_000)
    consensus = question_json(page, stack)["consensus"]
    rule = load_bottom_line_rule(Path(settings.VERIMED.verification.verifier_model))  # the stack's default
    if not rule.reads_with_model:
        assert consensus is None
        expect(page.locator("#bottom-line")).to_be_hidden()
        return
    assert consensus["claim"] is None
    line = consensus["bottom_line"]
    assert (line["model_alone"], line["rests_on"], line["model_reading"]["pmid"]) == (True, 0, HOSTILE_PMID)
    shown = shown_bottom_line(consensus)
    assert shown is not None
    expect(page.locator("#bottom-line-title")).to_have_text(line["title"])
    expect(page.locator("#bottom-line-votes")).to_have_text(shown.votes_sentence)
    expect(page.locator("#bottom-line-model")).to_have_text(f"{shown.model_sentence} PMID {HOSTILE_PMID}")
    expect(page.locator("#bottom-line .bottom-line-voters")).to_have_count(0)
    expect(page.locator("#consensus")).to_be_hidden()
    shot(page, "bottom-line-model-alone")
    page.locator("#bottom-line-model").get_by_role("button", name=f"PMID {HOSTILE_PMID}").click()
    expect(page.locator("#abstract-dialog #abstract-body")).to_have_text(HOSTILE_ARTICLE["abstract"])
    _assert_inert(page, alerts)
