"""The three kinds of users, end to end in headless Chromium against the running site and its worker.

A researcher asks with search settings, watches the answer stream, reads the coloured sentences by keyboard, opens
the highlighted evidence and flags a sentence; a reviewer resolves the flag; an admin uploads a file to index and
watches the job's progress. Screenshots of each step go to test-artifacts/.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.answers import assert_cited_and_verified
from tests.e2e.conftest import (
    ARTIFACTS,
    QUESTIONS,
    USERS,
    RunningStack,
    question_json,
    readme_shot,
    shot,
    sign_in,
)
from tests.e2e.contrast import AA_NORMAL_TEXT, contrast_ratio

VERDICT_CLASSES = ("SUPPORT", "CONTRADICT", "NO_EVIDENCE", "UNCLEAR", "NO_REFERENCE", "UNCITED")
COMMENT = "e2e: the cited abstract does not say this <b>at all</b>"

COLOURS = """(selector) => [...document.querySelectorAll(selector)].map((node) => {
  const style = getComputedStyle(node);
  return { cls: node.className, color: style.color, background: style.backgroundColor };
})"""


def _sign_out(page: Page, role: str) -> None:
    page.get_by_role("button", name=f"Sign out ({USERS[role]})").click()
    expect(page.get_by_role("button", name="Sign in")).to_be_visible()


def _tab_to(page: Page, selector: str, limit: int = 80) -> None:
    """Press Tab until the focused element matches `selector`: it must be reachable by keyboard alone."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("(selector) => document.activeElement.matches(selector)", selector):
            return
    raise AssertionError(f"{selector} cannot be reached with the Tab key")


def _check_verdict_contrast(page: Page) -> list[dict[str, object]]:
    measured = []
    for entry in page.evaluate(COLOURS, "#answer .sentence, #verdict-legend li"):
        ratio = contrast_ratio(entry["color"], entry["background"])
        measured.append({**entry, "ratio": round(ratio, 2)})
        assert ratio >= AA_NORMAL_TEXT, f"{entry['cls']}: contrast {ratio:.2f} is below WCAG AA"
    legend = {entry["cls"] for entry in measured}
    assert {f"verdict-{name}" for name in VERDICT_CLASSES} <= legend
    return measured


def test_a_researcher_asks_reads_the_evidence_and_flags_and_a_reviewer_resolves_it(
    stack: RunningStack, page: Page
) -> None:
    sign_in(page, stack, "researcher")
    page.get_by_text("Search settings").click()
    page.get_by_label("Abstracts to retrieve").select_option("10")
    page.get_by_label("Your biomedical question").fill(QUESTIONS[1])
    page.get_by_role("button", name="Ask").click()

    view = page.locator("#question-view")
    expect(page.locator(".stages li.active")).to_have_count(1, timeout=60_000)
    expect(page.locator("#answer")).not_to_be_empty(timeout=240_000)
    shot(page, "flow-01-streaming")
    expect(view).to_have_attribute("data-status", "done", timeout=300_000)
    shot(page, "flow-02-verified-answer")
    readme_shot(page, "answer-page")
    # What it stored, as `manage.py ask --json` prints it: the profile's engines retrieved, the worker cited and
    # verified (the command's own test runs on the embedded default only).
    assert_cited_and_verified(
        question_json(page, stack), question=QUESTIONS[1], gold_pmids=stack.gold_pmids[QUESTIONS[1]]
    )

    # Where the time went: a bar per stage, named, from the wait for a worker to verification.
    page.get_by_text("Timings and models").click()
    bars = page.locator("#stage-bars li")
    expect(bars.first).to_contain_text("Waiting for a worker")
    for words in ("Search", "Reading the prompt", "Writing the answer", "Verification"):
        expect(bars.filter(has_text=words)).to_have_count(1)
    expect(bars.first.locator(".stage-seconds")).to_have_text(re.compile(r"^\d+(\.\d)? s$"))
    assert all(bar.bounding_box() for bar in bars.locator(".stage-fill").all()), "every bar is drawn"
    shot(page, "flow-02b-stage-bars")

    # Colour is never the only signal: every sentence carries an icon and a spoken label, and the colours pass AA.
    sentences = page.locator("#answer .sentence")
    assert sentences.count() >= 1
    for index in range(sentences.count()):
        sentence = sentences.nth(index)
        expect(sentence.locator(".icon")).not_to_be_empty()
        expect(sentence.locator(".visually-hidden").first).to_contain_text(":")
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "verdict-contrast.json").write_text(json.dumps(_check_verdict_contrast(page), indent=1))

    # Keyboard only: reach the first sentence's Details button, open its panel, close it with Escape.
    page.locator("h1.question-text").click()
    _tab_to(page, "#answer .details-button")
    page.keyboard.press("Enter")
    panel = page.locator("#sentence-panel")
    expect(panel).to_be_visible()
    verdict_words = "Supported|Contradicted|No evidence|Unclear|Not a retrieved paper|Uncited"
    expect(panel).to_contain_text(re.compile(verdict_words))
    shot(page, "flow-03-sentence-panel")
    page.keyboard.press("Escape")
    expect(panel).to_be_hidden()
    assert page.evaluate("() => document.activeElement.matches('#answer .details-button')")

    # A citation chip opens the abstract with the evidence marked (a NO_EVIDENCE citation may mark nothing).
    chips = page.locator("#answer button.chip")
    assert chips.count() >= 1, "the answer should cite at least one retrieved abstract"
    decided = page.locator("#answer button.chip-SUPPORT, #answer button.chip-CONTRADICT")
    chip = decided.first if decided.count() else chips.first
    chip.focus()
    page.keyboard.press("Enter")
    dialog = page.locator("#abstract-dialog")
    expect(dialog).to_be_visible()
    expect(dialog.locator("#abstract-body")).not_to_be_empty()
    if decided.count():
        expect(dialog.locator("mark.evidence").first).to_be_visible()
    shot(page, "flow-04-evidence-highlighted")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()

    # Sources show where each abstract comes from.
    expect(page.locator("#sources li").first.get_by_role("link", name=re.compile("PubMed"))).to_be_visible()

    # Exports of the finished answer.
    markdown = page.request.get(
        stack.url + (page.get_by_role("link", name="Answer as Markdown").get_attribute("href") or "")
    )
    assert markdown.ok
    assert "References" in markdown.text()
    ris = page.request.get(
        stack.url + (page.get_by_role("link", name="Cited references (RIS)").get_attribute("href") or "")
    )
    assert ris.ok
    assert "TY  - " in ris.text()

    # Flag the first sentence.
    page.get_by_role("button", name="Flag sentence 1").click()
    flag_dialog = page.locator("#flag-dialog")
    expect(flag_dialog).to_be_visible()
    flag_dialog.get_by_label("Unsupported by the cited abstract").check()
    flag_dialog.get_by_label("Comment (optional)").fill(COMMENT)
    shot(page, "flow-05-flag-dialog")
    flag_dialog.get_by_role("button", name="Send flag").click()
    expect(page.locator("#flag-announce")).to_contain_text("Flag sent to the review queue")
    expect(page.locator("#answer .flag-marker").first).to_be_visible()
    question_url = page.url
    _sign_out(page, "researcher")

    # The reviewer finds it in the queue, resolves it, and the agreement figures count it.
    sign_in(page, stack, "reviewer")
    page.goto(stack.url + "/review/")
    row = page.locator("tr", has_text=COMMENT)
    expect(row).to_have_count(1)
    shot(page, "flow-06-review-queue")
    row.get_by_role("link", name=re.compile("Review")).click()
    expect(page.locator("#flag-status")).to_have_text("Open")
    page.get_by_label(re.compile("what the cited abstract says")).select_option("NO_EVIDENCE")
    page.get_by_label("Note").fill("Checked against the abstract: it is silent on this.")
    page.get_by_role("button", name="Resolve").click()
    # Back on the queue, which says what happened and counts the labelled flag in the agreement figures.
    expect(page.locator(".review-messages")).to_contain_text("resolved")
    expect(page.locator("#agreement-total")).to_contain_text("of 1 confirmed")
    page.goto(stack.url + "/review/?status=resolved")
    resolved = page.locator("tr", has_text=COMMENT)
    expect(resolved).to_contain_text("Resolved")
    shot(page, "flow-07-flag-resolved")
    resolved.get_by_role("link", name=re.compile("View")).click()
    expect(page.locator("#flag-status")).to_have_text("Resolved")
    claims = page.request.get(stack.url + "/review/export/claims.jsonl")
    assert claims.ok
    assert "NO_EVIDENCE" in claims.text() or '"evidence": {}' in claims.text()

    # Reviewers read any answer but cannot stop or share someone else's question.
    page.goto(question_url)
    expect(page.locator("#question-view")).to_have_attribute("data-status", "done")
    _sign_out(page, "reviewer")


@pytest.mark.profiles("embedded")
def test_an_admin_uploads_a_file_and_watches_the_index_job(stack: RunningStack, page: Page, tmp_path: Path) -> None:
    upload = tmp_path / "new-abstracts.jsonl"
    upload.write_text(
        "\n".join(
            json.dumps({"pmid": f"9900000{n}", "title": f"Uploaded abstract {n}", "abstract": text})
            for n, text in enumerate(
                (
                    "Everolimus slowed tumour growth in a mouse model of renal carcinoma.",
                    "Pembrolizumab improved survival in advanced melanoma in this cohort.",
                    "Metformin use was not associated with lactic acidosis in older adults.",
                ),
                start=1,
            )
        )
    )
    sign_in(page, stack, "researcher")
    assert page.request.get(stack.url + "/index/").status == 403  # the index pages are for admins only
    _sign_out(page, "researcher")

    sign_in(page, stack, "admin")
    page.goto(stack.url + "/index/jobs/new")
    shot(page, "flow-08-start-index-job")
    page.locator("input[type=file]").set_input_files(str(upload))
    page.get_by_role("button", name="Upload and ingest").click()
    progress = page.locator("#job-progress")
    expect(progress).to_be_visible()
    shot(page, "flow-09-index-job-running")
    expect(page.locator("#job-status")).to_have_text(re.compile("done", re.IGNORECASE), timeout=240_000)
    assert progress.get_attribute("value") == progress.get_attribute("max")
    expect(page.locator("#job-log")).to_contain_text("new-abstracts")
    shot(page, "flow-10-index-job-done")

    # The uploaded abstracts are in the database and the index status page counts them.
    assert page.request.get(stack.url + "/articles/99000001.json").ok
    page.goto(stack.url + "/index/")
    expect(page.locator("body")).to_contain_text("new-abstracts")
    shot(page, "flow-11-index-status")
