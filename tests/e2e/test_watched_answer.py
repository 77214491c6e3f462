"""A watched answer re-checked after an update file that retracts one of its cited papers, in the browser on the
running stack.

The paper is written here in PubMed's XML format about a made-up drug and stored into the running stack; the answer
citing it is written into a question as the generation stage would (as test_browser.py does: no LLM time) and
verified by the stack's worker. Its owner watches it from the page. An update file whose notice retracts the paper is
published on a local server that imitates NCBI's and synced with `pubmed_sync --updates`, as the daily sync does:
the end of the job re-checks the watched answer on the worker, and the page shows "Since you asked" with the
retraction and the header the unread notification."""

from __future__ import annotations

import gzip
import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import USERS, RunningStack, question_json, shot, sign_in
from tests.ncbi_server import UPDATES, serve_ncbi

pytestmark = pytest.mark.profiles("embedded")

QUESTION = "What does quellorapine do in influenza?"
CITED_PMID, NOTICE_PMID = "99200001", "99200009"
TITLE = "Quellorapine for influenza: a randomised trial."
ABSTRACT = "Quellorapine shortened influenza illness by 1.5 days in 400 adults. Adverse events were mild."
ANSWER = f"Quellorapine shortened influenza illness by 1.5 days in adults (PUBMED:{CITED_PMID})."
NOTICE_TITLE = f"Retraction: {TITLE}"
UPDATE_FILE = "pubmed26n9801.xml.gz"


def _citation(pmid: str, title: str, *, abstract: str = "", types: str, extra: str = "") -> str:
    text = f"<Abstract><AbstractText>{abstract}</AbstractText></Abstract>" if abstract else ""
    return f"""<PubmedArticle>
  <MedlineCitation Status="MEDLINE" Owner="NLM">
    <PMID Version="1">{pmid}</PMID>
    <Article PubModel="Print">
      <Journal>
        <JournalIssue CitedMedium="Internet"><Volume>4</Volume><PubDate><Year>2024</Year></PubDate></JournalIssue>
        <Title>Respiratory Test</Title><ISOAbbreviation>Respir Test</ISOAbbreviation>
      </Journal>
      <ArticleTitle>{title}</ArticleTitle>{text}
      <Language>eng</Language>
      <PublicationTypeList><PublicationType>{types}</PublicationType></PublicationTypeList>
    </Article>{extra}
  </MedlineCitation>
  <PubmedData><PublicationStatus>ppublish</PublicationStatus></PubmedData>
</PubmedArticle>"""


def _pubmed_file(*citations: str) -> str:
    body = "\n".join(citations)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<PubmedArticleSet>\n{body}\n</PubmedArticleSet>\n'


# The notice has no abstract, as most have: never an article, it still marks the paper it retracts.
RETRACTING_UPDATE = _pubmed_file(
    _citation(
        NOTICE_PMID,
        NOTICE_TITLE,
        types="Retraction of Publication",
        extra='<CommentsCorrectionsList><CommentsCorrections RefType="RetractionOf"><RefSource>Respir Test. 2024;4:1'
        f'</RefSource><PMID Version="1">{CITED_PMID}</PMID></CommentsCorrections></CommentsCorrectionsList>',
    )
)

# As test_browser.py's HOSTILE_ANSWER_SCRIPT: the answer written into the question, verified by the real worker. The
# paper is stored first, in the same process (one Django start-up less), with its vectors left to the stack.
ANSWER_SCRIPT = """
from django.contrib.auth.models import User
from django.core.management import call_command
from webapp.qa.models import Question, RetrievedDocument
from webapp.qa.services.admission import question_create
from webapp.qa.tasks import question_verify_task
call_command("ingest", "--no-progress", "--defer-embedding", {paper!r})
question = question_create(text={question!r}, user=User.objects.get(username={user!r}), enqueue=False)
Question.objects.filter(pk=question.pk).update(
    status="generating", answer_text={answer!r}, answer_raw={answer!r}, context={{"given": [{pmid!r}]}}
)
RetrievedDocument.objects.create(question=question, rank=1, pmid={pmid!r}, score=1.0, lexical_score=1.0,
                                 semantic_score=1.0)
question_verify_task.delay(question.pk)
print(question.pk)
"""


def _answer_citing_the_paper(stack: RunningStack) -> int:
    paper = stack.var_dir / "quellorapine.xml"
    paper.write_text(_pubmed_file(_citation(CITED_PMID, TITLE, abstract=ABSTRACT, types="Randomized Controlled Trial")))
    script = ANSWER_SCRIPT.format(
        paper=str(paper), question=QUESTION, user=USERS["researcher"], answer=ANSWER, pmid=CITED_PMID
    )
    made = stack.manage("shell", "-c", script)
    assert made.returncode == 0, made.stderr[-3000:]
    return int(made.stdout.split()[-1])


def _wait_for_recheck(page: Page, stack: RunningStack, *, sync_output: str, timeout_s: float = 180) -> dict[str, Any]:
    """The first re-check, read from the page's own JSON: the worker makes it once the sync's job has ended (looked
    at here rather than through `pubmed_sync --wait`, which looks every five seconds)."""
    deadline = time.monotonic() + timeout_s
    while not (rechecks := question_json(page, stack)["rechecks"]):
        assert time.monotonic() < deadline, f"the watched answer was not re-checked after the sync: {sync_output}"
        time.sleep(1)
    first: dict[str, Any] = rechecks[0]
    return first


def test_a_watched_answer_is_rechecked_after_an_update_that_retracts_its_cited_paper(
    stack: RunningStack, page: Page, tmp_path: Path
) -> None:
    question_id = _answer_citing_the_paper(stack)
    sign_in(page, stack, "researcher")
    page.goto(f"{stack.url}/questions/{question_id}/")
    expect(page.locator("#question-view")).to_have_attribute("data-status", "done", timeout=120_000)
    page.reload()  # the watch controls come with an answered page
    page.get_by_role("button", name="Watch this answer").click()
    expect(page.get_by_role("button", name="Watching · Unwatch")).to_be_visible()
    assert question_json(page, stack)["watched"] is True
    expect(page.locator("#since-you-asked")).to_have_count(0)

    with serve_ncbi(tmp_path / "ncbi") as server:
        server.publish(UPDATES, UPDATE_FILE, gzip.compress(RETRACTING_UPDATE.encode(), mtime=0))
        synced = stack.manage("pubmed_sync", "--updates", "--base-url", server.url(UPDATES))
        assert synced.returncode == 0, synced.stderr[-3000:]
        assert "1 to process now" in synced.stdout, synced.stdout[-2000:]
        recheck = _wait_for_recheck(page, stack, sync_output=synced.stdout[-2000:])  # the worker downloads it here
    assert recheck["trigger"] == "sync"
    retractions = [change for change in recheck["changes"] if change["kind"] == "retraction"]
    assert retractions == [
        {
            "kind": "retraction",
            "pmid": CITED_PMID,
            "title": TITLE,
            "before": "none",
            "after": "retracted",
            "notices": [retractions[0]["notices"][0]],
        }
    ]
    assert retractions[0]["notices"][0]["pmid"] == NOTICE_PMID
    assert not [change for change in recheck["changes"] if change["kind"] == "verdict"], "same abstract, same verdict"

    page.reload()
    since = page.locator("#since-you-asked")
    expect(since.get_by_role("heading", name="Since you asked")).to_be_visible()
    expect(since).to_contain_text(f"PMID {CITED_PMID} retracted")
    retraction = since.locator("li.change-retraction")
    expect(retraction).to_contain_text(f"Cited paper PMID {CITED_PMID} (“{TITLE}”) is now retracted")
    expect(retraction).to_contain_text(NOTICE_TITLE)
    expect(retraction.get_by_role("link", name=f"PMID {CITED_PMID}")).to_have_attribute(
        "href", f"https://pubmed.ncbi.nlm.nih.gov/{CITED_PMID}/"
    )
    expect(page.locator("#unread-count")).to_have_text("1")
    # The answer itself is not rewritten; its source carries the Retracted badge the corpus now gives the paper.
    expect(page.locator("#answer")).to_contain_text("Quellorapine shortened influenza illness")
    expect(page.locator("#sources .retraction-retracted")).to_have_text("Retracted")
    shot(page, "watched-answer-since-you-asked")

    page.locator("#notifications-link").click()
    notification = page.locator("#notifications li.notification.unread")
    expect(notification).to_have_count(1)
    expect(notification).to_contain_text(QUESTION)
    expect(notification).to_contain_text(f"PMID {CITED_PMID} retracted")
    page.get_by_role("button", name="Mark all as read").click()
    expect(page.locator("#unread-count")).to_have_count(0)
