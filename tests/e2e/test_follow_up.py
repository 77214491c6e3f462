"""A follow-up thread in headless Chromium on the running stack: the follow-up is rewritten by the real model into a
standalone question shown for editing, asking it creates a question in the thread that links back to the earlier
one and is given the abstracts the earlier answer cited, and the history lists it under its thread.

The first answer is written into the database as the generation stage would (test_browser.py does the same) and
verified by the worker, so the only model time is the rewrite and the follow-up's prompt: the follow-up is stopped
once the model has been given its abstracts, before it writes an answer. The thread searches only a year no article
has: the follow-up's own search finds nothing, so what its model is given comes from the thread alone, which is
what the test checks, and its prompt stays short."""

from __future__ import annotations

import time
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import QUESTIONS, USERS, RunningStack, question_json, shot, sign_in, stop_question

pytestmark = pytest.mark.profiles("embedded")

# Two of the everolimus question's gold abstracts, on its mechanism.
CITED = ("20384580", "18025810")
NO_ARTICLE_YEAR = 2100
ROOT_ANSWER = (
    "Everolimus inhibits the mammalian target of rapamycin (mTOR), a kinase that controls mRNA translation "
    f"(PUBMED:{CITED[0]}). It blocks cell proliferation through the Akt-mTOR-p70S6K pathway (PUBMED:{CITED[1]})."
)
FOLLOW_UP = "Is it used in kidney transplant recipients?"

ANSWERED_SCRIPT = """
from django.contrib.auth.models import User
from webapp.qa.models import Question, RetrievedDocument
from webapp.qa.pipeline import RetrievalFilters
from webapp.qa.services.admission import question_create
from webapp.qa.tasks import question_verify_task
question = question_create(
    text={text!r}, user=User.objects.get(username={user!r}), filters=RetrievalFilters(year_from={year}), enqueue=False
)
Question.objects.filter(pk=question.pk).update(
    status="generating", answer_text={answer!r}, answer_raw={answer!r}, context={{"given": {pmids!r}}}
)
for rank, pmid in enumerate({pmids!r}, start=1):
    RetrievedDocument.objects.create(
        question=question, rank=rank, pmid=pmid, score=1.0 / rank, lexical_score=1.0, semantic_score=1.0
    )
question_verify_task.delay(question.pk)
print(question.pk)
"""


def _answered_question(stack: RunningStack) -> int:
    script = ANSWERED_SCRIPT.format(
        text=QUESTIONS[0], user=USERS["researcher"], answer=ROOT_ANSWER, pmids=list(CITED), year=NO_ARTICLE_YEAR
    )
    made = stack.manage("shell", "-c", script)
    assert made.returncode == 0, made.stderr[-3000:]
    return int(made.stdout.split()[-1])


def _json_once_given(page: Page, stack: RunningStack, *, timeout: float) -> dict[str, Any]:
    """The question's JSON once the generation stage has recorded what the model was given."""
    deadline = time.monotonic() + timeout
    while True:
        data = question_json(page, stack)
        if data["context"].get("given") or data["status"] in ("failed", "cancelled", "done"):
            return data
        assert time.monotonic() < deadline, f"the model was given nothing within {timeout:.0f} s: {data['status']}"
        page.wait_for_timeout(500)


def test_a_follow_up_is_rewritten_asked_in_its_thread_and_listed_under_it(stack: RunningStack, page: Page) -> None:
    root_id = _answered_question(stack)
    sign_in(page, stack, "researcher")
    page.goto(f"{stack.url}/questions/{root_id}/")
    expect(page.locator("#question-view")).to_have_attribute("data-status", "done", timeout=180_000)
    page.reload()  # the follow-up form is offered once the answer is done

    page.get_by_label("Ask a follow-up").fill(FOLLOW_UP)
    page.get_by_role("button", name="Ask a follow-up").click()
    draft = page.locator("#follow-up-draft")
    expect(draft).to_be_visible()
    proposal = page.get_by_label("Standalone question to ask")
    expect(proposal).not_to_be_empty()  # the follow-up and its thread, askable before the rewrite comes
    # The real model's rewrite, polled by follow-up.js into the text box.
    expect(draft).to_have_attribute("data-status", "proposed", timeout=180_000)
    rewritten = proposal.input_value()
    assert "everolimus" in rewritten.lower(), f"the rewrite should name the drug: {rewritten!r}"
    expect(page.locator("#follow-up-status")).to_contain_text("Rewritten from this thread")
    page.locator("#follow-up").scroll_into_view_if_needed()
    shot(page, "follow-up-rewrite")

    page.get_by_role("button", name="Ask", exact=True).click()
    expect(page.locator("h1.question-text")).to_have_text(rewritten)
    earlier = page.locator("#thread-earlier a")
    expect(earlier).to_have_text([QUESTIONS[0]])
    data = _json_once_given(page, stack, timeout=240)
    assert (data["parent"], data["thread"], data["thread_questions"]) == (root_id, root_id, [root_id, data["id"]])
    # The earlier answer's sources stay available: its own search (the thread's year) found nothing, yet the model
    # is given them, and the page lists them as sources from earlier in the thread.
    assert data["settings"]["filters"]["year_from"] == NO_ARTICLE_YEAR, "a follow-up searches as its thread did"
    assert data["retrieved"] == []
    assert data["context"]["given"] == list(CITED)
    assert [source["pmid"] for source in data["thread_sources"]] == list(CITED)
    expect(page.locator("#sources .earlier-badge")).to_have_count(2, timeout=10_000)
    shot(page, "follow-up-thread")
    stop_question(page)  # its answer is not what this test is about

    page.goto(f"{stack.url}/history/")
    thread = page.locator(f'li.history-thread[data-thread="{root_id}"]')
    expect(thread.locator(":scope > a")).to_have_text(QUESTIONS[0])
    expect(thread.locator("li.history-follow-up > a")).to_have_text([rewritten])
    shot(page, "follow-up-history")


ASK_TWICE_SCRIPT = """
from django.contrib.auth.models import User
from webapp.qa.follow_ups import follow_up_ask, follow_up_draft_create
from webapp.qa.services.admission import question_create
user = User.objects.get(username={user!r})
parent = question_create(text="Is everolimus an mTOR inhibitor?", user=user, enqueue=False)
draft = follow_up_draft_create(parent=parent, user=user, text="And in transplants?", enqueue=False)
first = follow_up_ask(draft=draft, text="Is everolimus used in transplants?", user=user, enqueue=False)
again = follow_up_ask(draft=draft, text="Is everolimus used in transplants?", user=user, enqueue=False)
print(first.pk == again.pk, first.parent_id == parent.pk)
"""


@pytest.mark.profiles("production")
def test_asking_a_follow_up_locks_its_draft_on_postgresql(stack: RunningStack) -> None:
    """The ask locks the draft row; PostgreSQL refuses a lock over the nullable side of an outer join, which SQLite
    (no row locks) never showed: the browser flow above answered 500 on the production profile."""
    result = stack.manage("shell", "-c", ASK_TWICE_SCRIPT.format(user=USERS["researcher"]))

    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-2:] == ["True", "True"]
