"""What a source says, whatever it is: a stored PubMed abstract by its PMID, or a page of the asker's own library by
its `DOC:<id>:p<page>` (the text of the passages starting there). Read by the prompt and by the verifier alike."""

from __future__ import annotations

from collections.abc import Iterable

from webapp.corpus.models import Article
from webapp.library.sources import library_pages


def source_texts(*, ids: Iterable[str], owner_id: int | None) -> dict[str, tuple[str, str]]:
    """(title, text) of each id that still exists; a page only when it is `owner_id`'s (none without an owner)."""
    wanted = list(set(ids))
    articles = Article.objects.only("pmid", "title", "abstract").in_bulk(wanted, field_name="pmid")
    texts = {pmid: (article.title, article.abstract) for pmid, article in articles.items()}
    pages = library_pages(source_ids=wanted, owner_id=owner_id)
    return texts | {key: (page.title, page.text) for key, page in pages.items()}
