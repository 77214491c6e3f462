"""A page of the asker's own library as an answer's source, in the shape every source has (`SourcePayload`), for the
one person who may read it; anyone else (a reviewer, a share link's reader) sees that the answer cites a page of a
private document, and nothing of it."""

from __future__ import annotations

from django.urls import reverse

from webapp.library.sources import LibraryPage
from webapp.qa.payloads import SourcePayload

WITHHELD_TITLE = "A page of a document in the asker's own library (not shown: only they can read it)"
GONE_TITLE = "A page of a document you have since deleted from your library"
LIBRARY_JOURNAL = "Your library"


def library_source(page: LibraryPage) -> SourcePayload:
    """The page for its owner: the document's title and page, and where the viewer opens it."""
    return {
        "pmid": page.source_id,
        "title": page.title,
        "journal": LIBRARY_JOURNAL,
        "year": None,
        "url": page_viewer_url(page),
        "authors": [],
        "doi": "",
        "retraction": {"status": "none", "notices": []},
        "study_design": None,
    }


def withheld_source(source_id: str, *, deleted: bool = False) -> SourcePayload:
    """What a reader other than the asker sees of a cited page; `deleted`: what the asker sees of a page whose
    document they deleted since."""
    return {
        "pmid": source_id,
        "title": GONE_TITLE if deleted else WITHHELD_TITLE,
        "journal": "",
        "year": None,
        "url": "",
        "authors": [],
        "doi": "",
        "retraction": {"status": "none", "notices": []},
        "study_design": None,
    }


def page_viewer_url(page: LibraryPage) -> str:
    """The PDF at that page with its first passage marked (a JATS document: its page, at that passage)."""
    return f"{reverse('library-document-view', args=[page.document_id])}?page={page.page}&passage={page.first_passage}"
