"""The sources a question keeps: retracted papers left out (the search asked again for as many more) unless the
question includes them, and stronger study designs first when it asks for that.

The first tests stand a ranked list in for the search, which is not what they test; the last ones run the real
search through the question pipeline."""

from __future__ import annotations

import pytest

from indexer.base import FusedHit
from indexer.records import ArticleRecord
from tests.webapp.factories import article_retracted
from webapp.corpus.models import Article
from webapp.qa import selectors, source_screening
from webapp.qa.models import Question
from webapp.qa.pipeline import PipelineSettings, RetrievalFilters, default_pipeline_settings
from webapp.qa.services import admission, retrieve

RANKED = [str(pmid) for pmid in range(1, 9)]  # what the search would return, best first


def hit(pmid: str) -> FusedHit:
    return FusedHit(pmid=pmid, score=1.0, lexical_score=1.0, semantic_score=0.0, lexical_raw=None, semantic_raw=None)


@pytest.fixture
def searches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The top_k of every search run again; each returns the first top_k of RANKED."""
    asked: list[int] = []

    def search(query: str, pipeline: PipelineSettings, *, top_k: int) -> list[FusedHit]:
        asked.append(top_k)
        return [hit(pmid) for pmid in RANKED[:top_k]]

    monkeypatch.setattr(source_screening, "_search", search)
    return asked


def pipeline(top_k: int = 4, **filters: bool) -> PipelineSettings:
    defaults = default_pipeline_settings()
    return defaults.model_copy(
        update={
            "retrieval": defaults.retrieval.model_copy(update={"top_k": top_k}),
            "filters": RetrievalFilters(**filters),
        }
    )


def screened(settings: PipelineSettings) -> list[str]:
    first = [hit(pmid) for pmid in RANKED[: settings.retrieval.top_k]]
    return [h.pmid for h in source_screening.screened_hits(query="q", hits=first, pipeline=settings)]


@pytest.fixture
def stored(db: None) -> None:
    for pmid in RANKED:
        Article.objects.create(pmid=pmid, title=f"Paper {pmid}", abstract="Text.")


@pytest.mark.usefixtures("stored")
def test_retracted_papers_are_dropped_and_the_search_fetches_as_many_more(searches: list[int]) -> None:
    article_retracted(pmid="2")
    article_retracted(pmid="3")

    assert screened(pipeline(top_k=4)) == ["1", "4", "5", "6"]
    assert searches == [6]  # four asked for, two of them retracted


@pytest.mark.usefixtures("stored")
def test_a_wider_search_that_brings_more_retracted_papers_widens_again(searches: list[int]) -> None:
    for pmid in ("2", "5", "6"):
        article_retracted(pmid=pmid)

    assert screened(pipeline(top_k=4)) == ["1", "3", "4", "7"]
    assert searches == [5, 6, 7]  # each wider search met one more retracted paper


@pytest.mark.usefixtures("stored")
def test_when_the_search_runs_out_fewer_sources_are_kept(searches: list[int]) -> None:
    for pmid in ("1", "2", "3", "4", "5"):
        article_retracted(pmid=pmid)

    assert screened(pipeline(top_k=4)) == ["6", "7", "8"]
    assert searches == [8, 9]  # the second search returned only 8: nothing more to find


@pytest.mark.usefixtures("stored")
def test_nothing_is_searched_again_when_none_is_retracted(searches: list[int]) -> None:
    assert screened(pipeline(top_k=4)) == ["1", "2", "3", "4"]
    assert searches == []


@pytest.mark.usefixtures("stored")
def test_the_setting_keeps_retracted_papers_where_the_search_put_them(searches: list[int]) -> None:
    article_retracted(pmid="2")

    assert screened(pipeline(top_k=4, include_retracted=True)) == ["1", "2", "3", "4"]
    assert searches == []


@pytest.mark.usefixtures("stored")
def test_stronger_designs_come_first_and_the_search_order_stands_within_a_design(searches: list[int]) -> None:
    designs = {"1": ["Case Reports"], "2": ["Randomized Controlled Trial"], "4": ["Meta-Analysis"], "5": ["Review"]}
    for pmid, types in designs.items():
        Article.objects.filter(pmid=pmid).update(publication_types=types)
    Article.objects.filter(pmid="6").update(mesh=[{"descriptor": "Cohort Studies"}])
    Article.objects.filter(pmid="7").update(publication_types=["Randomized Controlled Trial"])

    assert screened(pipeline(top_k=8, prefer_stronger_designs=True)) == ["4", "2", "7", "6", "1", "5", "3", "8"]
    assert screened(pipeline(top_k=8)) == RANKED, "off by default"


# --- Through the pipeline, with the real search (and the real embedding model).


@pytest.mark.model
def test_a_retracted_paper_is_not_retrieved_unless_the_question_includes_it(
    indexed_articles: list[ArticleRecord],
) -> None:
    article_retracted(pmid="10000001")
    left_out = admission.question_create(text="Does metformin cause lactic acidosis?", enqueue=False)
    included = admission.question_create(
        text="Does metformin cause lactic acidosis?",
        enqueue=False,
        filters=RetrievalFilters(include_retracted=True),
    )

    retrieve.question_retrieve(question_id=left_out.pk)
    retrieve.question_retrieve(question_id=included.pk)

    assert list(left_out.retrieved.values_list("pmid", flat=True)) == ["10000002"]
    left_out.refresh_from_db()
    included.refresh_from_db()
    assert left_out.closest_candidate is not None
    assert left_out.closest_candidate["pmid"] == "10000002", "a retracted paper is never the closest candidate"
    assert included.closest_candidate is not None
    assert included.closest_candidate["pmid"] == "10000002", "nor when the question includes retracted papers"
    payload = selectors.question_payload(selectors.question_get(question_id=included.pk))
    first = payload["retrieved"][0]
    assert (first["pmid"], first["rank"]) == ("10000001", 1)
    assert first["source"]["retraction"]["status"] == "retracted"
    assert Question.objects.get(pk=included.pk).settings["filters"]["include_retracted"] is True
