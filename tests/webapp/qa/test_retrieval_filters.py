"""Filters chosen for a question are stored with it and applied inside both search legs."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from indexer.records import ArticleRecord
from webapp.qa.models import Question
from webapp.qa.pipeline import RetrievalFilters
from webapp.qa.services import admission, retrieve

# Loads a real model (see MARKER_BY_FIXTURE in tests/conftest.py for the automatic cases).
pytestmark = pytest.mark.model


def retrieved(question: Question) -> list[str]:
    return list(question.retrieved.order_by("rank").values_list("pmid", flat=True))


def test_a_year_filter_keeps_older_abstracts_out_of_the_retrieved_set(indexed_articles: list[ArticleRecord]) -> None:
    question = admission.question_create(
        text="Does metformin cause lactic acidosis?", enqueue=False, filters=RetrievalFilters(year_from=2011)
    )

    retrieve.question_retrieve(question_id=question.pk)

    assert question.settings["filters"]["year_from"] == 2011
    assert retrieved(question) == ["10000002"]  # the metformin abstract (2010) is not admitted


def test_without_filters_both_abstracts_are_candidates(indexed_articles: list[ArticleRecord]) -> None:
    question = admission.question_create(text="Does metformin cause lactic acidosis?", enqueue=False)

    retrieve.question_retrieve(question_id=question.pk)

    assert retrieved(question)[0] == "10000001"
    assert set(retrieved(question)) == {"10000001", "10000002"}


def test_a_journal_filter_applies_to_both_legs(indexed_articles: list[ArticleRecord]) -> None:
    question = admission.question_create(
        text="mTORC1 inhibition by everolimus", enqueue=False, filters=RetrievalFilters(journals=("Diabetes Care",))
    )

    retrieve.question_retrieve(question_id=question.pk)

    hits = list(question.retrieved.all())
    assert [hit.pmid for hit in hits] == ["10000001"]
    assert hits[0].semantic_raw is not None  # the dense leg returned it too, among admitted articles only


@pytest.mark.django_db
def test_the_ask_command_refuses_a_year_range_that_ends_before_it_starts() -> None:
    with pytest.raises(CommandError, match="year_from is after year_to"):
        call_command("ask", "Does aspirin work?", "--year-from", "2020", "--year-to", "2010", "--in-process")
