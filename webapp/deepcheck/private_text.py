"""A deep check is read by reviewers as well as the asker, so the tree it stores never holds text from the asker's
own library: a claim judged against a cited library page (`DOC:<id>:p<page>`) keeps its verdict and offsets, but not
the page's title or evidence sentences (the asker reads those from the answer's own chip, which only they can open)."""

from __future__ import annotations

from typing import Any

from generator.citations import DOC_CITATION_ID

LIBRARY_PAGE_TITLE = "A page of the asker's own library"


def without_library_text(node: Any) -> Any:
    """The stored tree (plain JSON) with every library page's title and evidence text left out."""
    if isinstance(node, list):
        return [without_library_text(item) for item in node]
    if not isinstance(node, dict):
        return node
    copied = {key: without_library_text(value) for key, value in node.items()}
    if "evidence_text" in copied and DOC_CITATION_ID.fullmatch(str(copied.get("pmid", ""))):
        copied |= {"title": LIBRARY_PAGE_TITLE, "evidence_text": []}
    return copied
