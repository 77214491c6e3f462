"""A researcher's library as a source of answers: searched for their questions (owner inside each leg's filter), and
read back page by page for the prompt, the verifier and the page. An answer cites a page, `DOC:<id>:p<page>`: the
text given to the model for it is every passage that starts on that page (for JATS, which has no pages, one passage:
p<n> is the n-th)."""

from __future__ import annotations

import operator
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import reduce

from django.db.models import Q

from indexer.base import FusedHit, SearchFilters
from indexer.hybrid import HybridSettings, hybrid_search
from indexer.library_records import page_citation_id, parse_page_citation_id, parse_passage_index_id
from webapp.corpus import engines
from webapp.library.engines import library_lexical_index, library_vector_index
from webapp.library.models import Document, Passage

# Passages fetched per page wanted: a page holds several, and the answer needs distinct pages.
PASSAGES_PER_PAGE = 3


@dataclass(frozen=True)
class LibraryPage:
    source_id: str  # DOC:<id>:p<page>
    document_id: int
    page: int  # the PDF page, or for JATS the passage number (from 1)
    document_title: str
    text: str  # the passages starting on that page, in order
    first_passage: int  # the ordinal of its first passage, where the viewer opens

    @property
    def title(self) -> str:
        return f"{self.document_title} (p. {self.page})"


def passage_page(passage: Passage) -> int:
    return passage.page if passage.page is not None else passage.ordinal + 1


def library_search(*, query: str, owner_id: int, settings: HybridSettings, top_k: int) -> list[FusedHit]:
    """The owner's best `top_k` pages for `query`, each scored by its best passage, best first."""
    hits = hybrid_search(
        query,
        lexical=library_lexical_index(),
        vectors=library_vector_index(),
        embedder=engines.embedder(),
        # Neither expansion nor the reranker reads library passages: both read PubMed abstracts.
        settings=settings.model_copy(
            update={"top_k": top_k * PASSAGES_PER_PAGE, "expand_query": False, "rerank": False}
        ),
        filters=SearchFilters(owner=str(owner_id)),
    )
    keys = {hit.pmid: parsed for hit in hits if (parsed := parse_passage_index_id(hit.pmid)) is not None}
    ordinals: dict[int, set[int]] = defaultdict(set)
    for document_id, ordinal in keys.values():
        ordinals[document_id].add(ordinal)
    # The hits' own passages only: a long document holds thousands, and this runs for every question.
    rows = Passage.objects.filter(
        _any_of(Q(document_id=document_id, ordinal__in=found) for document_id, found in ordinals.items()),
        document__owner_id=owner_id,
        document__deleting=False,
    ).only("document_id", "ordinal", "page")
    pages = {(row.document_id, row.ordinal): passage_page(row) for row in rows}
    best: dict[str, FusedHit] = {}
    for hit in hits:  # best first: the first passage seen of a page is its best
        key = keys.get(hit.pmid)
        if key is None or key not in pages:  # a passage of a document deleted since it was indexed
            continue
        source_id = page_citation_id(key[0], pages[key])
        if source_id not in best:
            best[source_id] = FusedHit(
                pmid=source_id,
                score=hit.score,
                lexical_score=hit.lexical_score,
                semantic_score=hit.semantic_score,
                lexical_raw=hit.lexical_raw,
                semantic_raw=hit.semantic_raw,
            )
    return list(best.values())[:top_k]


def _on_pages(document_id: int, pages: set[int]) -> Q:
    """The document's passages that start on these pages (`passage_page`'s rule, as a query)."""
    numbered = Q(page__isnull=True, ordinal__in=[page - 1 for page in pages])
    return Q(document_id=document_id) & (Q(page__in=pages) | numbered)


def _any_of(conditions: Iterable[Q]) -> Q:
    """The conditions ORed; one that matches nothing when there are none."""
    return reduce(operator.or_, conditions, Q(pk__in=[]))


def library_pages(*, source_ids: Iterable[str], owner_id: int | None) -> dict[str, LibraryPage]:
    """The pages among `source_ids` that belong to `owner_id`'s library (any other id is left out: a PMID, a page
    of someone else's document, a deleted one)."""
    wanted: dict[int, set[int]] = defaultdict(set)
    for source_id in source_ids:
        parsed = parse_page_citation_id(source_id)
        if parsed is not None:
            wanted[parsed[0]].add(parsed[1])
    if owner_id is None or not wanted:
        return {}
    documents = Document.objects.filter(pk__in=wanted, owner_id=owner_id, deleting=False).in_bulk()
    if not documents:
        return {}
    # Those pages' passages only (the answer page reads this on every poll; a document may hold thousands): a PDF's
    # by their page, a JATS document's (no pages) by the passage a page number stands for (`passage_page`).
    on_pages = _any_of(_on_pages(document_id, wanted[document_id]) for document_id in documents)
    texts: dict[tuple[int, int], list[Passage]] = defaultdict(list)
    for passage in Passage.objects.filter(on_pages).order_by("document_id", "ordinal"):
        texts[(passage.document_id, passage_page(passage))].append(passage)
    return {
        page_citation_id(document_id, page): LibraryPage(
            source_id=page_citation_id(document_id, page),
            document_id=document_id,
            page=page,
            document_title=documents[document_id].title or documents[document_id].filename,
            text=" ".join(passage.text for passage in passages),
            first_passage=passages[0].ordinal,
        )
        for (document_id, page), passages in texts.items()
    }
