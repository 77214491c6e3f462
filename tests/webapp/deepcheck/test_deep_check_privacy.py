"""A deep check stores no text of the asker's own library: reviewers read deep checks."""

from __future__ import annotations

from webapp.deepcheck.private_text import LIBRARY_PAGE_TITLE, without_library_text


def _evidence(pmid: str) -> dict[str, object]:
    return {
        "pmid": pmid,
        "title": f"Title of {pmid}",
        "cited": True,
        "label": "SUPPORT",
        "confidence": 0.9,
        "leaning": None,
        "evidence_spans": [[0, 12]],
        "evidence_text": [f"Evidence of {pmid}"],
    }


def test_a_library_pages_title_and_evidence_leave_the_stored_tree_and_a_pubmed_abstracts_stay():
    tree = {"sentences": [{"claims": [{"text": "A claim.", "evidence": [_evidence("DOC:3:p2"), _evidence("123")]}]}]}

    stored = without_library_text(tree)

    page, abstract = stored["sentences"][0]["claims"][0]["evidence"]
    assert (page["title"], page["evidence_text"]) == (LIBRARY_PAGE_TITLE, [])
    assert (page["label"], page["evidence_spans"]) == ("SUPPORT", [[0, 12]])  # the verdict stays
    assert abstract == _evidence("123")
    assert "Evidence of DOC:3:p2" not in str(stored)
    assert tree["sentences"][0]["claims"][0]["evidence"][0]["title"] == "Title of DOC:3:p2"  # a copy, not in place
