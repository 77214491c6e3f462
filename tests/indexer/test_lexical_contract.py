"""The LexicalIndex contract, run against every adapter: tantivy on disk and OpenSearch (a real osmem-server).

Scores are compared only with each other (order, boosts), never with fixed values: osmem approximates Lucene's BM25.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol

import pytest
from opensearchpy import OpenSearch

from indexer.adapter_registry import UnknownAdapterError
from indexer.base import NO_FILTERS, Facets, Hit, LexicalIndex, LexicalOptions, SearchFilters
from indexer.errors import BackendUnavailableError
from indexer.opensearch_index import OpenSearchIndex
from indexer.ownership import OwnershipError
from indexer.records import ArticleRecord, Author, MeshHeading
from indexer.registry import build_lexical_index
from indexer.tantivy_index import TantivyIndex
from tests.indexer.opensearch_support import fresh_index_name, running_osmem, unreachable_url

RECORDS = (
    ArticleRecord("101", "Metformin in type 2 diabetes", "Metformin lowered fasting glucose in adults with diabetes."),
    ArticleRecord("102", "Inhaled corticosteroids for asthma", "Inhaled steroids reduced asthma exacerbations."),
    ArticleRecord("103", "Warfarin and stroke", "Warfarin prevented stroke in atrial fibrillation."),
    ArticleRecord("104", "Statins and cholesterol", "Statin therapy lowered LDL cholesterol by a third."),
)


def faceted(
    pmid: str, year: int | None, journal: str, publication_types: tuple[str, ...], mesh: tuple[str, ...]
) -> ArticleRecord:
    """An article whose abstract says "patients", so that one query matches the whole faceted corpus."""
    return ArticleRecord(
        pmid,
        f"Outcomes in cohort {pmid}",
        "Patients were followed for five years.",
        journal=journal,
        year=year,
        publication_types=publication_types,
        mesh=tuple(MeshHeading(descriptor) for descriptor in mesh),
    )


JA, REVIEW, RCT = "Journal Article", "Review", "Randomized Controlled Trial"
FACETED = (
    faceted("F01", 1995, "Lancet", (JA,), ("Humans", "Hypertension")),
    faceted("F02", 2001, "Lancet", (JA, REVIEW), ("Humans", "Diabetes Mellitus, Type 2")),
    faceted("F03", 2005, "BMJ", (RCT, JA), ("Humans", "Hypertension", "Aged")),
    faceted("F04", 2010, "BMJ", (REVIEW,), ("Animals", "Mice")),
    faceted("F05", 2010, "JAMA", ("Meta-Analysis", REVIEW), ("Humans", "Diabetes Mellitus, Type 2")),
    faceted("F06", 2015, "N Engl J Med", (RCT,), ("Humans", "Aged")),
    faceted("F07", 2018, "J Clin Invest", (JA,), ("Animals", "Hypertension")),
    faceted("F08", 2020, "Lancet", ("Case Reports",), ("Humans",)),
    faceted("F09", 2022, "BMJ", (JA, "Research Support, Non-U.S. Gov't"), ("Humans", "COVID-19")),
    faceted("F10", None, "JAMA", (JA,), ("Humans", "Hypertension")),
    faceted("F11", None, "", (), ()),
    faceted("F12", 2024, "N Engl J Med", (RCT, JA), ("Humans", "COVID-19", "Aged")),
)
MATCHES_ALL_FACETED = "Which patients?"
EVERYTHING = 100

FILTERS = {
    "no filters": NO_FILTERS,
    "from a year": SearchFilters(year_from=2010),
    "up to a year": SearchFilters(year_to=2005),
    "between years": SearchFilters(year_from=2005, year_to=2015),
    "one year": SearchFilters(year_from=2010, year_to=2010),
    "one journal": SearchFilters(journals=("BMJ",)),
    "either journal": SearchFilters(journals=("BMJ", "JAMA")),
    "journal in another case": SearchFilters(journals=("bmj",)),
    "journal never indexed": SearchFilters(journals=("Nature",)),
    "one publication type": SearchFilters(publication_types=(REVIEW,)),
    "either publication type": SearchFilters(publication_types=(REVIEW, "Case Reports")),
    "part of a publication type": SearchFilters(publication_types=("Journal",)),
    "publication type with punctuation": SearchFilters(publication_types=("Research Support, Non-U.S. Gov't",)),
    "one mesh descriptor": SearchFilters(mesh=("Hypertension",)),
    "mesh descriptor with a comma": SearchFilters(mesh=("Diabetes Mellitus, Type 2",)),
    "either mesh descriptor": SearchFilters(mesh=("Hypertension", "COVID-19")),
    "year and journals and mesh": SearchFilters(year_from=2005, journals=("BMJ", "Lancet"), mesh=("Humans",)),
    "type and mesh and year": SearchFilters(publication_types=(RCT,), mesh=("Aged",), year_to=2020),
    "every kind": SearchFilters(
        year_from=2000,
        year_to=2022,
        journals=("Lancet", "BMJ", "JAMA"),
        publication_types=(JA,),
        mesh=("Hypertension", "COVID-19"),
    ),
}


class MakeIndex(Protocol):
    def __call__(self, *, title_boost: float = 2.0, owned: bool = False) -> LexicalIndex: ...


@pytest.fixture(scope="session")
def opensearch_url() -> Iterator[str]:
    with running_osmem() as url:
        yield url


@pytest.fixture(params=["tantivy", "opensearch"])
def make_index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MakeIndex]:
    """A factory of empty indexes of one backend: a new directory, or a new index name on the shared server."""
    url = request.getfixturevalue("opensearch_url") if request.param == "opensearch" else ""
    opened: list[LexicalIndex] = []

    def make(*, title_boost: float = 2.0, owned: bool = False) -> LexicalIndex:
        index: LexicalIndex
        if url:
            index = OpenSearchIndex(url, fresh_index_name(), title_boost=title_boost, owned=owned)
        else:
            index = TantivyIndex(tmp_path / f"tantivy-{len(opened)}", title_boost=title_boost, owned=owned)
        opened.append(index)
        return index

    yield make
    for index in opened:
        index.close()


@pytest.fixture
def index(make_index: MakeIndex) -> LexicalIndex:
    index = make_index()
    index.add(RECORDS)
    return index


@pytest.fixture
def faceted_index(make_index: MakeIndex) -> LexicalIndex:
    index = make_index()
    index.add(FACETED)
    return index


def pmids(hits: list[Hit]) -> list[str]:
    return [hit.pmid for hit in hits]


def admitted(records: tuple[ArticleRecord, ...], filters: SearchFilters) -> set[str]:
    """The reference answer: what `SearchFilters.admits` keeps."""
    return {record.pmid for record in records if filters.admits(Facets.of(record))}


# Ranking


def test_it_ranks_the_relevant_document_first(index: LexicalIndex) -> None:
    hits = index.search("Does warfarin prevent stroke?", limit=10)

    assert pmids(hits) == ["103"]  # no other document mentions warfarin or stroke
    assert hits[0].score > 0


def test_it_orders_hits_by_non_increasing_score(index: LexicalIndex) -> None:
    hits = index.search("metformin glucose cholesterol statin", limit=10)

    assert set(pmids(hits)) == {"101", "104"}
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)


def test_it_matches_stemmed_word_forms(index: LexicalIndex) -> None:
    assert pmids(index.search("exacerbation of asthmatic steroid", limit=10))[0] == "102"


def test_it_returns_at_most_limit_hits(index: LexicalIndex) -> None:
    hits = index.search("metformin asthma warfarin statin", limit=2)

    assert len(hits) == 2


def test_expansion_words_find_more_documents_below_those_the_query_matches(index: LexicalIndex) -> None:
    plain = index.search("warfarin", limit=10)
    expanded = index.search("warfarin", limit=10, expansion={"cholesterol": 0.3, "asthma": 0.3})

    assert pmids(plain) == ["103"]
    assert pmids(expanded)[0] == "103"
    assert set(pmids(expanded)) == {"102", "103", "104"}


def test_an_expansion_word_weighs_by_its_value(index: LexicalIndex) -> None:
    light = index.search("warfarin", limit=10, expansion={"cholesterol": 0.1})
    heavy = index.search("warfarin", limit=10, expansion={"cholesterol": 0.9})

    assert light[0].score == pytest.approx(heavy[0].score)  # the query's own match is untouched
    assert heavy[1].score > light[1].score > 0


def test_expansion_words_are_plain_words_never_query_syntax(index: LexicalIndex) -> None:
    hits = index.search("warfarin", limit=10, expansion={"cholesterol^99 OR (asthma": 0.5, "": 0.5})

    assert pmids(hits)[0] == "103"
    assert all(hit.score < 100 for hit in hits)


def test_it_finds_a_non_ascii_word(make_index: MakeIndex) -> None:
    index = make_index()
    index.add(
        [
            ArticleRecord("1", "Dry eyes in Sjögren syndrome", "Sjögren patients reported dry eyes."),
            ArticleRecord("2", "Vertigo", "Vertigo in older adults."),
        ]
    )

    assert pmids(index.search("Sjögren", limit=10)) == ["1"]


TITLE_OR_BODY = (
    ArticleRecord("1", "Hypertension outcomes", "Adults were followed for five years and examined yearly."),
    ArticleRecord("2", "Long term outcomes", "Adults with hypertension were followed for five years."),
)


def test_it_ranks_a_term_in_the_title_above_the_same_term_only_in_the_body(make_index: MakeIndex) -> None:
    index = make_index()
    index.add(TITLE_OR_BODY)

    hits = index.search("hypertension", limit=10)

    assert pmids(hits) == ["1", "2"]
    assert hits[0].score > hits[1].score


def test_its_title_boost_raises_only_the_score_of_title_matches(make_index: MakeIndex) -> None:
    boosted, plain = make_index(title_boost=3.0), make_index(title_boost=1.0)
    boosted.add(TITLE_OR_BODY)
    plain.add(TITLE_OR_BODY)

    boosted_scores = {hit.pmid: hit.score for hit in boosted.search("hypertension", limit=10)}
    plain_scores = {hit.pmid: hit.score for hit in plain.search("hypertension", limit=10)}

    assert boosted_scores["1"] > plain_scores["1"]
    assert boosted_scores["2"] == pytest.approx(plain_scores["2"])


# Queries that must not break anything


@pytest.mark.parametrize("query", ["", "   ", "the of and is", "What is it?", "?!", '"AND (*) OR :"', "-- ^~"])
def test_it_returns_nothing_for_a_query_of_only_stopwords_or_punctuation(index: LexicalIndex, query: str) -> None:
    assert index.search(query, limit=10) == []


@pytest.mark.parametrize(
    "query",
    [
        'title:"warfarin" AND (stroke OR -bleeding)^3',
        "warfarin* stroke~ [x TO z] {y}",
        'warfarin\\" stroke/ \\\\ && || !',
        '{"query": {"match_all": {}}} warfarin',
    ],
)
def test_it_searches_query_syntax_as_plain_words(index: LexicalIndex, query: str) -> None:
    assert pmids(index.search(query, limit=10)) == ["103"]


# Writes


def test_it_counts_the_documents(index: LexicalIndex) -> None:
    assert index.count() == len(RECORDS)


def test_it_replaces_the_document_when_a_pmid_is_added_again(index: LexicalIndex) -> None:
    index.add([ArticleRecord("101", "Zinc and the common cold", "Zinc lozenges shortened colds by a day.")])

    assert index.count() == len(RECORDS)
    assert pmids(index.search("zinc lozenges", limit=10)) == ["101"]
    assert index.search("metformin", limit=10) == []


def test_it_keeps_only_the_last_version_of_a_pmid_repeated_within_one_batch(make_index: MakeIndex) -> None:
    index = make_index()

    index.add([ArticleRecord("7", "First", "Aspirin text."), ArticleRecord("7", "Second", "Ibuprofen text.")])

    assert index.count() == 1
    assert index.search("aspirin", limit=10) == []
    assert pmids(index.search("ibuprofen", limit=10)) == ["7"]


def test_it_deletes_the_document(index: LexicalIndex) -> None:
    index.delete(["103"])

    assert index.count() == len(RECORDS) - 1
    assert index.search("warfarin", limit=10) == []
    assert pmids(index.search("metformin", limit=10)) == ["101"]


def test_it_changes_nothing_when_deleting_unknown_or_no_pmids(index: LexicalIndex) -> None:
    index.delete([])
    index.delete(["999"])

    assert index.count() == len(RECORDS)


def test_it_treats_adding_no_records_as_a_no_op(make_index: MakeIndex) -> None:
    index = make_index()

    index.add([])

    assert index.count() == 0
    assert index.search("anything", limit=10) == []


def test_it_stores_and_deletes_non_numeric_ids_exactly(make_index: MakeIndex) -> None:
    index = make_index()
    index.add([ArticleRecord("S2:123", "Gut microbiome", "The microbiome shifted."), ArticleRecord("123", "", "Else.")])

    assert pmids(index.search("microbiome", limit=10)) == ["S2:123"]
    index.delete(["123"])
    assert pmids(index.search("microbiome", limit=10)) == ["S2:123"]
    assert index.count() == 1


# Filters


def test_the_faceted_query_matches_every_faceted_article(faceted_index: LexicalIndex) -> None:
    # The filter tests below rely on it: with no filter, the query's hits are the whole corpus.
    assert set(pmids(faceted_index.search(MATCHES_ALL_FACETED, limit=EVERYTHING))) == admitted(FACETED, NO_FILTERS)


@pytest.mark.parametrize("filters", FILTERS.values(), ids=FILTERS.keys())
def test_it_returns_exactly_the_articles_the_filters_admit(faceted_index: LexicalIndex, filters: SearchFilters) -> None:
    hits = faceted_index.search(MATCHES_ALL_FACETED, limit=EVERYTHING, filters=filters)

    assert set(pmids(hits)) == admitted(FACETED, filters)
    assert len(hits) == len(set(pmids(hits)))


@pytest.mark.parametrize(
    "filters", [SearchFilters(year_from=1000), SearchFilters(year_to=3000)], ids=["lower bound", "upper bound"]
)
def test_it_excludes_an_article_without_a_year_from_any_year_bound(
    faceted_index: LexicalIndex, filters: SearchFilters
) -> None:
    found = set(pmids(faceted_index.search(MATCHES_ALL_FACETED, limit=EVERYTHING, filters=filters)))

    assert found == {record.pmid for record in FACETED if record.year is not None}
    assert not found & {"F10", "F11"}


def test_it_applies_filters_inside_the_search_so_the_limit_counts_admitted_articles(make_index: MakeIndex) -> None:
    index = make_index()
    loud = "Cohort. The cohort of the cohort study: a cohort."
    quiet = "A long report on hospital staffing, budgets, rotas and one small cohort among many other topics."
    index.add(
        [
            *(ArticleRecord(f"L{n}", "Cohort cohort", loud, journal="Lancet") for n in range(1, 4)),
            *(ArticleRecord(f"B{n}", "Hospital staffing", quiet, journal="BMJ") for n in range(1, 4)),
        ]
    )
    assert set(pmids(index.search("cohort", limit=2))) <= {"L1", "L2", "L3"}  # BMJ articles score lower

    hits = index.search("cohort", limit=2, filters=SearchFilters(journals=("BMJ",)))

    assert len(hits) == 2
    assert set(pmids(hits)) <= {"B1", "B2", "B3"}


def test_its_filters_leave_the_scores_of_admitted_articles_unchanged(make_index: MakeIndex) -> None:
    index = make_index()
    index.add([*RECORDS, ArticleRecord("105", "Metformin and weight", "Metformin reduced weight.", journal="BMJ")])
    unfiltered = {hit.pmid: hit.score for hit in index.search("metformin weight", limit=10)}

    filtered = index.search("metformin weight", limit=10, filters=SearchFilters(journals=("BMJ",)))

    assert pmids(filtered) == ["105"]
    assert filtered[0].score == pytest.approx(unfiltered["105"])


def test_it_applies_the_filters_of_articles_re_added_with_new_facets(make_index: MakeIndex) -> None:
    index = make_index()
    index.add([ArticleRecord("1", "Aspirin", "Aspirin for pain.", journal="Lancet", year=1999)])

    index.add([ArticleRecord("1", "Aspirin", "Aspirin for pain.", journal="BMJ", year=2021)])

    assert index.search("aspirin", limit=10, filters=SearchFilters(journals=("Lancet",))) == []
    assert index.search("aspirin", limit=10, filters=SearchFilters(year_to=2000)) == []
    assert pmids(index.search("aspirin", limit=10, filters=SearchFilters(journals=("BMJ",), year_from=2021))) == ["1"]


# Library indexes: every document has an owner and every search names one, filtered inside the search.


def test_an_owners_search_finds_only_their_passages_and_the_limit_counts_only_theirs(make_index: MakeIndex) -> None:
    library = make_index(owned=True)
    loud = "Cohort. The cohort of the cohort study: a cohort."
    quiet = "A long report on hospital staffing, budgets, rotas and one small cohort among many other topics."
    library.add(
        [
            *(ArticleRecord(f"DOC:1:{n}", "Cohort cohort", loud, owner="7") for n in range(3)),
            *(ArticleRecord(f"DOC:2:{n}", "Hospital staffing", quiet, owner="8") for n in range(3)),
        ]
    )

    theirs = library.search("cohort", limit=2, filters=SearchFilters(owner="8"))
    mine = library.search("cohort", limit=10, filters=SearchFilters(owner="7"))

    assert len(theirs) == 2
    assert set(pmids(theirs)) <= {"DOC:2:0", "DOC:2:1", "DOC:2:2"}
    assert set(pmids(mine)) == {"DOC:1:0", "DOC:1:1", "DOC:1:2"}
    assert library.search("cohort", limit=10, filters=SearchFilters(owner="9")) == []


def test_a_library_index_refuses_a_search_without_an_owner_and_a_document_without_one(make_index: MakeIndex) -> None:
    library = make_index(owned=True)
    library.add([ArticleRecord("DOC:1:0", "Aspirin", "Aspirin for pain.", owner="7")])

    with pytest.raises(OwnershipError):
        library.search("aspirin", limit=5)
    with pytest.raises(OwnershipError):
        library.add([ArticleRecord("DOC:1:1", "Aspirin", "Aspirin for fever.")])
    assert library.count() == 1


def test_a_public_index_refuses_an_owned_document_and_finds_nothing_for_an_owner(index: LexicalIndex) -> None:
    with pytest.raises(OwnershipError):
        index.add([ArticleRecord("DOC:1:0", "Warfarin", "Warfarin and stroke.", owner="7")])

    assert index.search("warfarin", limit=5, filters=SearchFilters(owner="7")) == []
    assert index.count() == len(RECORDS)


# OpenSearch only: what the other adapters have no counterpart for


@pytest.mark.parametrize(
    "call",
    [
        lambda index: index.search("warfarin", limit=10),
        lambda index: index.add(RECORDS),
        lambda index: index.delete(["101"]),
        lambda index: index.count(),
        lambda index: index.documents(["101"]),
    ],
    ids=["search", "add", "delete", "count", "documents"],
)
def test_opensearch_reports_an_unreachable_cluster_as_a_transient_error(
    call: Callable[[OpenSearchIndex], object],
) -> None:
    url = unreachable_url()
    index = OpenSearchIndex(url, fresh_index_name(), timeout=2.0)

    with pytest.raises(BackendUnavailableError, match=re.escape(url)) as raised:
        call(index)

    assert raised.value.transient


def test_opensearch_keeps_credentials_out_of_its_error_messages() -> None:
    url = unreachable_url()
    index = OpenSearchIndex(url.replace("http://", "http://verimed:s3cret@"), fresh_index_name(), timeout=2.0)

    with pytest.raises(BackendUnavailableError, match=re.escape(url)) as raised:
        index.count()

    assert "s3cret" not in str(raised.value)


def test_opensearch_hydrates_the_stored_fields_of_articles(opensearch_url: str) -> None:
    index = OpenSearchIndex(opensearch_url, fresh_index_name())
    record = ArticleRecord(
        "S2:9",
        "Aspirin after stroke",
        "Aspirin lowered recurrence.",
        journal="Lancet",
        year=2019,
        authors=(Author("Smith J"), Author("Stroke Trialists", collective=True)),
        mesh=(MeshHeading("Aspirin", major_topic=True), MeshHeading("Humans")),
        publication_types=(RCT,),
    )
    index.add([record, *RECORDS])

    documents = index.documents(["S2:9", "103", "unknown", "S2:9"])

    assert set(documents) == {"S2:9", "103"}
    assert documents["S2:9"] == {
        "pmid": "S2:9",
        "title": "Aspirin after stroke",
        "abstract": "Aspirin lowered recurrence.",
        "full_text": record.text,
        "year": 2019,
        "pubdate": "2019",
        "journal": "Lancet",
        "publication_types": [RCT],
        "mesh": ["Aspirin", "Humans"],
        "authors": ["Smith J", "Stroke Trialists"],
    }
    assert "year" not in documents["103"]
    assert index.documents([]) == {}


def test_opensearch_shares_an_index_between_objects_with_the_same_name(opensearch_url: str) -> None:
    name = fresh_index_name()
    OpenSearchIndex(opensearch_url, name).add(RECORDS)

    reader = OpenSearchIndex(opensearch_url, name)  # what another process (the worker) would open

    assert reader.count() == len(RECORDS)
    assert pmids(reader.search("inhaled corticosteroids", limit=10)) == ["102"]


def test_opensearch_puts_the_refresh_interval_back_after_a_bulk_load(opensearch_url: str) -> None:
    name = fresh_index_name()
    index = OpenSearchIndex(opensearch_url, name)
    index.warm_up()
    client = OpenSearch(hosts=[opensearch_url])
    client.indices.put_settings(index=name, body={"index": {"refresh_interval": "5s"}})

    index.add(RECORDS)

    settings = client.indices.get_settings(index=name, name="index.refresh_interval")
    assert settings[name]["settings"]["index"]["refresh_interval"] == "5s"
    assert index.count() == len(RECORDS)


def test_opensearch_turns_refresh_back_on_after_a_load_that_died_with_it_off(opensearch_url: str) -> None:
    name = fresh_index_name()
    index = OpenSearchIndex(opensearch_url, name)
    index.warm_up()
    client = OpenSearch(hosts=[opensearch_url])
    client.indices.put_settings(index=name, body={"index": {"refresh_interval": "-1"}})  # as a killed `add` leaves it

    index.add(RECORDS)

    settings = client.indices.get_settings(index=name, name="index.refresh_interval")
    assert "refresh_interval" not in settings.get(name, {}).get("settings", {}).get("index", {})


# The registry


@pytest.mark.parametrize("backend", ["tantivy", "opensearch"])
def test_the_registry_opens_each_backend_where_its_options_say(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    url = request.getfixturevalue("opensearch_url") if backend == "opensearch" else ""
    options = LexicalOptions(backend=backend, folder=tmp_path / "tantivy", url=url, index=fresh_index_name())

    index = build_lexical_index(options)
    index.add(RECORDS)

    assert isinstance(index, {"tantivy": TantivyIndex, "opensearch": OpenSearchIndex}[backend])
    assert pmids(index.search("Does warfarin prevent stroke?", limit=10)) == ["103"]
    assert (tmp_path / "tantivy").is_dir() == (backend == "tantivy")
    index.close()


def test_the_registry_refuses_an_unknown_backend_naming_the_known_ones() -> None:
    with pytest.raises(
        UnknownAdapterError, match=r"unknown lexical backend 'lucene' \(available: tantivy, opensearch\)"
    ):
        build_lexical_index(LexicalOptions(backend="lucene"))


def test_the_embedded_backend_needs_a_folder() -> None:
    with pytest.raises(ValueError, match="tantivy lexical backend needs a folder"):
        build_lexical_index(LexicalOptions(backend="tantivy"))
