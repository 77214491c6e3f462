"""The retrieved abstracts of a question, read from the database and focused on the question for the prompt."""

from __future__ import annotations

from generator.answer import ContextAbstract
from generator.context_focus import focused_abstract, focused_context
from webapp.corpus import engines
from webapp.corpus.models import Article
from webapp.qa.models import Question
from webapp.qa.pipeline import PipelineSettings
from webapp.qa.source_texts import source_texts
from webapp.qa.threads import thread_cited_pmids

# At most this many abstracts from the thread's earlier answers join a follow-up's own (see _earlier_sources).
EARLIER_SOURCES_MAX = 3


def generation_context(question: Question, pipeline: PipelineSettings) -> list[ContextAbstract]:
    pmids = list(question.retrieved.values_list("pmid", flat=True))
    texts = source_texts(ids=pmids, owner_id=question.user_id)  # abstracts, and the asker's own pages
    retrieved = [
        ContextAbstract(pmid=pmid, title=texts[pmid][0], abstract=texts[pmid][1])
        for pmid in pmids
        if pmid in texts  # an article or document deleted since indexing is simply not offered to the model
    ]
    focused = focused_context(
        question.text,
        retrieved,
        embedder=engines.embedder(),
        options=pipeline.generation,
    )
    return focused + _earlier_sources(question, pipeline, shown={item.pmid for item in focused})


def _earlier_sources(question: Question, pipeline: PipelineSettings, *, shown: set[str]) -> list[ContextAbstract]:
    """For a follow-up, the abstracts its thread's earlier answers cited, the latest answer's first.

    The rewritten question runs a fresh search, which may no longer find what the thread was built on; so those
    abstracts are given too, each once, focused on the follow-up like the rest. They come after the fresh hits: when
    the window is full, packing trims and drops them first, so the prompt keeps the budget every answer has, and a
    few (EARLIER_SOURCES_MAX) keep the prompt's reading time close to an ordinary question's. The page lists them
    as sources from earlier in the thread (`thread_sources` in the question's JSON: given, not retrieved).
    """
    if question.parent_id is None:
        return []
    pmids = [pmid for pmid in thread_cited_pmids(question=question) if pmid not in shown][:EARLIER_SOURCES_MAX]
    articles = Article.objects.in_bulk(pmids, field_name="pmid")
    if not pipeline.filters.include_retracted:  # as the search screens them, for a paper retracted since
        articles = {pmid: a for pmid, a in articles.items() if a.retraction_status != Article.Retraction.RETRACTED}
    return [
        ContextAbstract(
            pmid=pmid,
            title=articles[pmid].title,
            abstract=focused_abstract(
                question.text,
                articles[pmid].abstract,
                embedder=engines.embedder(),
                sentences_kept=pipeline.generation.sentences_per_abstract,
            ),
        )
        for pmid in pmids
        if pmid in articles
    ]
