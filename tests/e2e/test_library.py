"""A researcher's library in the browser on the running stack: twenty PDFs chosen at once are each uploaded on their
own with a progress row, listed, indexed by the worker in the background until every one is searchable, and one is
opened at a page of its PDF with a passage's words highlighted by pdf.js. To anyone else (a reviewer, another
researcher) every one of those documents is missing: 404 on each of its pages and absent from their library.

The papers are typeset at run time with reportlab from real PubMedQA text (tests/indexer/pdf_samples.py), each from
its own group of PQA-L records, so that they are twenty distinct papers of 2-4 pages; every other one is set in two
columns under a running header, as journals set them."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.conftest import PASSWORD, USERS, RunningStack, question_json, shot, sign_in
from tests.indexer.pdf_samples import library_papers
from tests.support import shared_data_dir

PAPERS = 20
RECORDS_PER_PAPER = 6  # 2-4 pages a paper in either layout
# Indexing is embedding on the worker's one process, behind whatever else it was given: minutes at worst.
SEARCHABLE_WITHIN_S = 300
OTHER_RESEARCHER = "rosa"


def _write_papers(folder: Path, count: int = PAPERS, *, first: int = 0) -> list[Path]:
    paths = []
    for name, paper in library_papers(shared_data_dir(), count, per_paper=RECORDS_PER_PAPER, first=first):
        assert 2 <= paper.pages <= 4, (name, paper.pages)
        path = folder / name
        path.write_bytes(paper.pdf)
        paths.append(path)
    return paths


def _documents(page: Page, stack: RunningStack) -> list[dict[str, Any]]:
    """The signed-in researcher's documents, as the API lists them with the browser's session."""
    response = page.request.get(f"{stack.url}/api/v1/documents", headers={"Accept": "application/json"})
    assert response.ok, response.text()
    results: list[dict[str, Any]] = response.json()["results"]
    return results


def _wait_until_all_searchable(page: Page, papers: list[Path]) -> None:
    """Reload the list until each paper's row says Searchable: the worker indexes each upload in the background."""
    rows = page.locator("#library-documents tbody tr")
    deadline = time.monotonic() + SEARCHABLE_WITHIN_S
    while True:
        shown = [rows.filter(has_text=paper.name).locator("td").nth(4).inner_text() for paper in papers]
        if all(state == "Searchable" for state in shown):
            return
        assert "Not searchable" not in shown, "an indexing failed: " + page.locator("#library-documents").inner_text()
        assert time.monotonic() < deadline, f"not all searchable after {SEARCHABLE_WITHIN_S} s: {shown}"
        page.wait_for_timeout(2_000)
        page.reload()


def _assert_missing_to(page: Page, stack: RunningStack, documents: list[dict[str, Any]]) -> None:
    for document in documents:
        for route in ("/", "/file", "/view"):
            url = f"{stack.url}/library/{document['id']}{route}"
            assert page.request.get(url).status == 404, url
        api = page.request.get(f"{stack.url}/api/v1/documents/{document['id']}")
        assert api.status == 404, document["id"]
    page.goto(stack.url + "/library/")
    expect(page.get_by_role("heading", name="Your library")).to_be_visible()
    for document in documents:
        expect(page.locator(f'#library-list a[href="/library/{document["id"]}/"]')).to_have_count(0)
    ids = {document["id"] for document in documents}
    assert not ids & {document["id"] for document in _documents(page, stack)}


def _sign_in_as(page: Page, stack: RunningStack, username: str) -> None:
    """conftest's sign_in, for any username (the second researcher is made here, not one of USERS)."""
    page.goto(stack.url + "/accounts/login/?next=/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("button", name=f"Sign out ({username})")).to_be_visible()


def test_twenty_pdfs_are_uploaded_indexed_viewed_and_missing_to_everyone_else(
    stack: RunningStack, page: Page, browser: Browser, tmp_path: Path
) -> None:
    papers = _write_papers(tmp_path)
    sign_in(page, stack, "researcher")
    page.goto(stack.url + "/library/")
    before = {document["id"] for document in _documents(page, stack)}

    page.locator("#library-files").set_input_files(papers)
    page.get_by_role("button", name="Upload").click()

    # The script sends the files one after another, each row ending in its outcome.
    rows = page.locator("#library-progress li.library-progress-item")
    expect(rows).to_have_count(PAPERS)
    for index, paper in enumerate(papers):
        expect(rows.nth(index)).to_contain_text(paper.name)
        expect(rows.nth(index).locator(".library-progress-outcome")).to_have_text("Added: open it", timeout=60_000)
    # Once the last is added the script puts the fresh list in place of the one the page came with.
    expect(page.locator("#library-documents tbody tr")).to_have_count(len(before) + PAPERS)
    documents = [document for document in _documents(page, stack) if document["id"] not in before]
    assert sorted(document["filename"] for document in documents) == [paper.name for paper in papers]
    assert all(document["kind"] == "pdf" and 2 <= document["pages"] <= 4 for document in documents)

    _wait_until_all_searchable(page, papers)
    assert all(document["searchable"] for document in _documents(page, stack) if document["id"] not in before)
    shot(page, f"library-list-{stack.profile}")

    # A two-column paper with a running header: its document page, then its viewer at a passage on page 2.
    chosen = next(document for document in documents if document["filename"] == papers[0].name)
    page.locator("#library-documents").get_by_role("link", name=chosen["title"]).click()
    expect(page.locator("h1")).to_have_text(chosen["title"])
    expect(page.locator("#library-index-state")).to_contain_text("Searchable since")
    passages = page.locator("#library-passages li.library-passage")
    expect(passages.first).to_be_visible()
    shot(page, f"library-document-{stack.profile}")
    detail = page.request.get(f"{stack.url}/api/v1/documents/{chosen['id']}").json()
    on_page_two = next(passage for passage in detail["passages"] if passage["page"] == 2)
    assert passages.count() == len(detail["passages"])
    expect(page.locator(f"#passage-{on_page_two['ordinal']} .meta")).to_contain_text("Page 2")

    page.goto(f"{stack.url}/library/{chosen['id']}/view?page=2&passage={on_page_two['ordinal']}")
    viewer = page.locator("#pdf-viewer")
    expect(viewer).to_have_attribute("data-rendered", "true", timeout=30_000)
    assert int(viewer.get_attribute("data-highlighted") or 0) > 0
    expect(page.locator("#pdf-status")).to_contain_text(f"Page 2 of {chosen['pages']}")
    expect(page.locator(".textLayer .evidence-highlight").first).to_be_visible()
    shot(page, f"library-viewer-{stack.profile}")

    # Nobody else reaches them: not a reviewer (who reads every question), not another researcher.
    done = stack.manage("user_create", OTHER_RESEARCHER, "--role", "researcher", "--password", PASSWORD)
    assert done.returncode == 0, done.stderr[-3000:]
    for person in (USERS["reviewer"], OTHER_RESEARCHER):
        context = browser.new_context(viewport={"width": 1280, "height": 1000})
        try:
            other = context.new_page()
            _sign_in_as(other, stack, person)
            _assert_missing_to(other, stack, documents)
        finally:
            context.close()


@pytest.mark.profiles("embedded")
def test_an_answer_asked_in_the_library_cites_a_pdf_page_that_opens_there_with_its_evidence(
    stack: RunningStack, page: Page, tmp_path: Path
) -> None:
    """The LLM writes the answer from the researcher's own papers only (the model sees nothing else, so what it cites
    must be one of their pages), the chip opens the page's text, and from there the PDF at that page.

    On the embedded default in the suite (an LLM answer costs the suite most of a minute); the production profile by
    hand: `VERIMED_E2E_PROFILES=production pytest tests/e2e/test_library.py -k answer_asked` (passed 2026-11-28)."""
    paper = _write_papers(tmp_path, 1, first=PAPERS)[0]  # a paper of its own, after the twenty of the other test
    sign_in(page, stack, "researcher")
    page.goto(stack.url + "/library/")
    page.locator("#library-files").set_input_files([paper])
    page.get_by_role("button", name="Upload").click()
    added = page.locator("#library-progress .library-progress-outcome").first
    expect(added).to_have_text(re.compile("Added: open it|Already in your library: open it"), timeout=60_000)
    _wait_until_all_searchable(page, [paper])
    document = next(document for document in _documents(page, stack) if document["filename"] == paper.name)

    page.goto(stack.url + "/")
    page.get_by_text("Search settings").click()
    page.get_by_role("radio", name="My library", exact=True).check()
    page.get_by_label("Your biomedical question").fill(document["title"])  # the paper's own question
    page.get_by_role("button", name="Ask").click()
    view = page.locator("#question-view")
    expect(view).to_have_attribute("data-status", "done", timeout=300_000)
    expect(page.locator(".search-summary")).to_contain_text("In my library")
    shot(page, "library-answer")

    # Only the researcher's own pages were searched (the other test may have given them twenty more papers), and the
    # paper whose question this is among them.
    retrieved = [doc["pmid"] for doc in question_json(page, stack)["retrieved"]]
    assert retrieved
    assert all(re.fullmatch(r"DOC:[0-9]+:p[0-9]+", pmid) for pmid in retrieved)
    assert any(pmid.startswith(f"DOC:{document['id']}:p") for pmid in retrieved)
    chips = page.locator("#answer button.chip", has_text=re.compile(r"^DOC:[0-9]+:p[0-9]+$"))
    assert chips.count() >= 1, "the answer should cite a page it was given: " + page.locator("#answer").inner_text()
    decided = page.locator("#answer button.chip-SUPPORT, #answer button.chip-CONTRADICT", has_text="DOC:")
    chip = decided.first if decided.count() else chips.first
    chip.click()
    dialog = page.locator("#abstract-dialog")
    expect(dialog).to_be_visible()
    expect(dialog.locator("#abstract-title")).to_contain_text("(p. ")
    if decided.count():
        expect(dialog.locator("mark.evidence").first).to_be_visible()
    shot(page, "library-answer-page-dialog")

    with page.context.expect_page() as opened:
        dialog.get_by_role("link", name="Open the document at this page").click()
    viewer_page = opened.value
    viewer = viewer_page.locator("#pdf-viewer")
    expect(viewer).to_have_attribute("data-rendered", "true", timeout=30_000)
    if decided.count():
        assert int(viewer.get_attribute("data-highlighted") or 0) > 0
    shot(viewer_page, "library-answer-page-viewer")
