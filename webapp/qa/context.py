"""The retrieved abstracts of a question, read from the database and focused on the question for the prompt."""

from __future__ import annotations

from generator.answer import ContextAbstract
from generator.context_focus import focused_context
from webapp.corpus import engines
from webapp.corpus.models import Article
from webapp.qa.models import Question
from webapp.qa.pipeline import PipelineSettings


def generation_context(question: Question, pipeline: PipelineSettings) -> list[ContextAbstract]:
    pmids = list(question.retrieved.values_list("pmid", flat=True))
    articles = Article.objects.in_bulk(pmids, field_name="pmid")
    retrieved = [
        ContextAbstract(pmid=pmid, title=articles[pmid].title, abstract=articles[pmid].abstract)
        for pmid in pmids
        if pmid in articles  # an article deleted since indexing is simply not offered to the model
    ]
    return focused_context(
        question.text,
        retrieved,
        embedder=engines.embedder(),
        options=pipeline.generation,
    )
