"""The deep check in the browser on the running stack: the person who asked runs it on their answer and watches its
progress; a reviewer (who reads deep checks but does not run them) reads the sentence's claims in the sentence panel
with the evidence of the abstract they came from, and flags a claim.

The answer is written into a question as the generation stage would (as test_browser.py does: no LLM time for the
answer) and verified by the stack's worker; the deep check's own single extraction call on the real packaged model
is the point, so the answer is one compound sentence, the shortest answer that has something to split. How well the
model splits is measured by `evaluate deep-check`, not here: the suite's 0.5B model returned this compound as one claim
(dropping the tolerability), the 1.5B model as two. It cites the hostile abstract every stack holds, whose markup must
stay text in the panel's evidence quotes.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import HOSTILE_PMID, USERS, RunningStack, shot, sign_in
from tests.support import TEST_LLM_MODEL

pytestmark = pytest.mark.profiles("embedded")

ANSWER = (
    "Zorvistatin lowered systolic blood pressure by 12 mmHg in adults with hypertension, and it was well tolerated "
    f"over 24 weeks (PUBMED:{HOSTILE_PMID})."
)
# As test_browser.py's HOSTILE_ANSWER_SCRIPT: the answer written into the question, verified by the real worker.
ANSWER_SCRIPT = """
from django.contrib.auth.models import User
from webapp.qa.models import Question, RetrievedDocument
from webapp.qa.services.admission import question_create
from webapp.qa.tasks import question_verify_task
question = question_create(text="Does zorvistatin lower blood pressure?", user=User.objects.get(username={user!r}),
                           enqueue=False)
Question.objects.filter(pk=question.pk).update(
    status="generating", answer_text={answer!r}, answer_raw={answer!r}, context={{"given": [{pmid!r}]}}
)
RetrievedDocument.objects.create(question=question, rank=1, pmid={pmid!r}, score=1.0, lexical_score=1.0,
                                 semantic_score=1.0)
question_verify_task.delay(question.pk)
print(question.pk)
"""
# Anything the hostile abstract could have turned into in the panel, had it reached the page as markup.
INJECTED = ", ".join(f"#sentence-panel {tag}" for tag in ("img", "svg", "script", "iframe", "b"))


def test_the_owner_deep_checks_an_answer_and_a_reviewer_reads_and_flags_its_claims(
    stack: RunningStack, page: Page
) -> None:
    made = stack.manage("shell", "-c", ANSWER_SCRIPT.format(answer=ANSWER, user=USERS["researcher"], pmid=HOSTILE_PMID))
    assert made.returncode == 0, made.stderr[-3000:]
    question_id = int(made.stdout.split()[-1])
    alerts: list[str] = []
    page.on("dialog", lambda dialog: (alerts.append(dialog.message), dialog.dismiss()))

    sign_in(page, stack, "researcher")
    page.goto(f"{stack.url}/questions/{question_id}/")
    expect(page.locator("#question-view")).to_have_attribute("data-status", "done", timeout=120_000)
    section = page.locator("#deep-check")
    expect(section).to_be_visible()
    page.get_by_role("button", name="Deep check", exact=True).click()
    expect(page.locator("#deep-check-status")).to_contain_text(re.compile("queued|Splitting|Judging|Searching"))
    # One model call reads the prompt and writes the claims: minutes on a slow, busy two-core machine.
    expect(section).to_have_attribute("data-status", "done", timeout=420_000)
    expect(page.locator("#deep-check-status")).to_contain_text("Done:")
    expect(page.get_by_role("button", name="Stop the deep check")).to_be_hidden()
    expect(page.get_by_role("button", name="Run the deep check again")).to_be_visible()

    page.get_by_role("button", name=f"Sign out ({USERS['researcher']})").click()
    sign_in(page, stack, "reviewer")
    page.goto(f"{stack.url}/questions/{question_id}/")
    expect(section).to_have_attribute("data-status", "done")
    expect(page.get_by_role("button", name="Run the deep check again")).to_have_count(0)  # reviewers read it

    payload: dict[str, Any] = page.request.get(f"{stack.url}/questions/{question_id}/deep-check.json").json()
    tree = payload["tree"]
    assert tree["extractor"] == TEST_LLM_MODEL
    assert json.loads(tree["extraction_raw"])["sentences"][0]["sentence"] == 1  # held to the schema
    sentence = tree["sentences"][0]
    claims = sentence["claims"]
    assert sentence["from_model"], sentence["note"]
    assert claims, sentence
    assert all(claim["evidence"][0]["pmid"] == HOSTILE_PMID for claim in claims)

    page.locator("#deep-check-summary").get_by_role("button", name="Sentence 1").click()
    tree_view = page.locator("#sentence-panel-deep-check")
    expect(tree_view).to_be_visible()
    expect(tree_view.locator(".deep-claim")).to_have_count(len(claims))
    for index, claim in enumerate(claims):
        item = tree_view.locator(".deep-claim").nth(index)
        expect(item.locator(".deep-claim-text")).to_have_text(claim["text"])
        expect(item.locator(".panel-verdict").first).to_be_visible()
        expect(item.locator(".deep-evidence-source").first).to_contain_text("Cited: Zorvistatin lowers blood pressure")
    supported = [index for index, claim in enumerate(claims) if claim["evidence"][0]["evidence_text"]]
    assert supported, claims
    first = tree_view.locator(".deep-claim").nth(supported[0])
    expect(first.locator("blockquote.panel-evidence").first).to_have_text(
        claims[supported[0]]["evidence"][0]["evidence_text"][0]
    )
    shot(page, "deep-check-tree")

    first.locator("summary", has_text="Flag this claim").click()
    first.get_by_role("button", name="Send flag").click()
    expect(first.locator(".deep-claim-flag")).to_contain_text("Flag sent to the review queue")

    page.wait_for_timeout(500)  # an onerror handler fires once a broken image has failed to load
    assert alerts == [], f"hostile text ran: {alerts}"
    assert page.locator(INJECTED).count() == 0, tree_view.inner_html()[:3000]
