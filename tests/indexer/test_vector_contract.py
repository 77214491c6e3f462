"""The `VectorIndex` contract, run against every adapter: qdrant-edge, and qdrant-client in local mode.

The engines are real; the vectors are seeded random unit vectors, so exact cosine similarity computed here with numpy
is the reference every ranking is compared with, and `SearchFilters.admits` the reference for every filter.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from indexer.adapter_registry import UnknownAdapterError
from indexer.base import NO_FILTERS, Chunk, Facets, SearchFilters, VectorIndex, VectorOptions, Vectors
from indexer.errors import BackendUnavailableError
from indexer.ownership import OwnershipError
from indexer.qdrant_client_index import QdrantClientIndex
from indexer.qdrant_edge_index import QdrantEdgeIndex
from indexer.qdrant_points import payload, point_id
from indexer.registry import build_vector_index

DIMENSION = 12
JOURNALS = ("Lancet", "BMJ", "JAMA", "Nature Medicine")
PUBLICATION_TYPES = ("Journal Article", "Review", "Randomized Controlled Trial", "Meta-Analysis")
MESH = ("Humans", "Diabetes Mellitus", "Hypertension", "Aspirin", "Mice")

Opener = Callable[[], VectorIndex]


def unit_vectors(count: int, *, seed: int) -> Vectors:
    vectors = np.random.default_rng(seed).normal(size=(count, DIMENSION)).astype(np.float32)
    normalised: Vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    return normalised


@dataclass(frozen=True)
class Corpus:
    chunks: list[Chunk]
    vectors: Vectors

    @property
    def pmids(self) -> list[str]:
        return list(dict.fromkeys(chunk.pmid for chunk in self.chunks))

    def facets(self, pmid: str) -> Facets:
        return next(chunk.facets for chunk in self.chunks if chunk.pmid == pmid)

    def ranking(self, query: Vectors, filters: SearchFilters = NO_FILTERS) -> list[tuple[str, float]]:
        """Admitted articles by their best chunk's exact cosine similarity, best first."""
        best: dict[str, float] = {}
        for chunk, score in zip(self.chunks, self.vectors @ query, strict=True):
            if filters.admits(chunk.facets):
                best[chunk.pmid] = max(best.get(chunk.pmid, -2.0), float(score))
        return sorted(best.items(), key=lambda item: -item[1])


def make_corpus() -> Corpus:
    """30 articles of 1 to 3 chunks with facets drawn from small pools; a few lack a year; one id is not a PMID."""
    rng = np.random.default_rng(2024)
    chunks: list[Chunk] = []
    for number in range(30):
        pmid = "S2:123" if number == 7 else str(1000 + number)
        facets = Facets(
            year=None if number % 9 == 4 else int(rng.integers(2012, 2024)),
            journal=JOURNALS[int(rng.integers(len(JOURNALS)))],
            publication_types=tuple(sorted(set(rng.choice(PUBLICATION_TYPES, size=2).tolist()))),
            mesh=tuple(sorted(set(rng.choice(MESH, size=int(rng.integers(0, 3))).tolist()))),
        )
        chunk_count = 3 if number % 5 == 0 else 1 + number % 2
        chunks.extend(Chunk(pmid, index, f"{pmid} part {index}", facets) for index in range(chunk_count))
    return Corpus(chunks, unit_vectors(len(chunks), seed=7))


CORPUS = make_corpus()
THREE_CHUNKS = "1000"  # number 0: 3 chunks
NO_YEAR = "1004"  # number 4: no year


# Both adapters are opened the way the product opens them, through the registry.
def open_edge(root: Path) -> VectorIndex:
    return build_vector_index(VectorOptions(backend="qdrant_edge", dimension=DIMENSION, folder=root / "qdrant_edge"))


def open_client_local(root: Path) -> VectorIndex:
    options = VectorOptions(backend="qdrant", dimension=DIMENSION, url=str(root / "qdrant_local"), collection="chunks")
    return build_vector_index(options)


def open_edge_library(root: Path) -> VectorIndex:
    options = VectorOptions(backend="qdrant_edge", dimension=DIMENSION, folder=root / "library_edge", owned=True)
    return build_vector_index(options)


def open_client_library(root: Path) -> VectorIndex:
    options = VectorOptions(
        backend="qdrant", dimension=DIMENSION, url=str(root / "library_local"), collection="library", owned=True
    )
    return build_vector_index(options)


@pytest.fixture(params=[open_edge, open_client_local], ids=["qdrant-edge", "qdrant-client-local"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Opens the adapter on the same storage each time it is called; closes whatever it opened at the end."""
    opened: list[VectorIndex] = []

    def open_index() -> VectorIndex:
        index: VectorIndex = request.param(tmp_path)
        opened.append(index)
        return index

    yield open_index
    for index in opened:
        index.close()


@pytest.fixture
def empty(opener: Opener) -> VectorIndex:
    return opener()


@pytest.fixture
def index(empty: VectorIndex) -> VectorIndex:
    empty.upsert(CORPUS.chunks, CORPUS.vectors)
    return empty


def vector_of(pmid: str, chunk_index: int) -> Vectors:
    position = next(
        number for number, chunk in enumerate(CORPUS.chunks) if (chunk.pmid, chunk.index) == (pmid, chunk_index)
    )
    vector: Vectors = CORPUS.vectors[position]
    return vector


def test_a_new_index_is_empty(empty: VectorIndex) -> None:
    assert empty.count() == 0
    assert empty.search(unit_vectors(1, seed=1)[0], limit=5) == []


def test_count_is_the_number_of_chunks_not_articles(index: VectorIndex) -> None:
    assert index.count() == len(CORPUS.chunks)
    assert len(CORPUS.chunks) > len(CORPUS.pmids)


def test_search_ranks_articles_by_the_exact_cosine_similarity_of_their_best_chunk(index: VectorIndex) -> None:
    query = unit_vectors(1, seed=99)[0]

    hits = index.search(query, limit=len(CORPUS.pmids))

    expected = CORPUS.ranking(query)
    assert [hit.pmid for hit in hits] == [pmid for pmid, _ in expected]
    assert [hit.score for hit in hits] == pytest.approx([score for _, score in expected], abs=1e-4)


def test_search_returns_the_article_of_an_identical_vector_first_with_score_one(index: VectorIndex) -> None:
    hits = index.search(vector_of("1013", 0), limit=3)

    assert len(hits) == 3
    assert hits[0].pmid == "1013"
    assert hits[0].score == pytest.approx(1.0, abs=1e-4)


def test_an_article_with_several_chunks_appears_once_scored_by_its_best_chunk(index: VectorIndex) -> None:
    for chunk_index in range(3):
        hits = index.search(vector_of(THREE_CHUNKS, chunk_index), limit=len(CORPUS.pmids))

        assert [hit.pmid for hit in hits].count(THREE_CHUNKS) == 1
        assert len({hit.pmid for hit in hits}) == len(hits) == len(CORPUS.pmids)
        assert hits[0].pmid == THREE_CHUNKS
        assert hits[0].score == pytest.approx(1.0, abs=1e-4)


def test_a_small_limit_counts_articles_not_chunks(index: VectorIndex) -> None:
    hits = index.search(vector_of(THREE_CHUNKS, 1), limit=4)

    assert [hit.pmid for hit in hits] == [pmid for pmid, _ in CORPUS.ranking(vector_of(THREE_CHUNKS, 1))[:4]]


def test_upserting_the_same_chunk_again_replaces_it(index: VectorIndex) -> None:
    replacement = unit_vectors(1, seed=1234)
    chunk = Chunk("1013", 0, "new text", Facets(year=2001, journal="New Journal"))

    index.upsert([chunk], replacement)

    assert index.count() == len(CORPUS.chunks)
    hit = index.search(replacement[0], limit=1, filters=SearchFilters(journals=("New Journal",)))[0]
    assert hit.pmid == "1013"
    assert hit.score == pytest.approx(1.0, abs=1e-4)
    assert index.search(vector_of("1013", 0), limit=1)[0].pmid != "1013"


def test_delete_removes_every_chunk_of_the_articles(index: VectorIndex) -> None:
    index.delete([THREE_CHUNKS, "S2:123"])

    deleted_chunks = sum(chunk.pmid in {THREE_CHUNKS, "S2:123"} for chunk in CORPUS.chunks)
    assert index.count() == len(CORPUS.chunks) - deleted_chunks
    for chunk_index in range(3):
        returned = {hit.pmid for hit in index.search(vector_of(THREE_CHUNKS, chunk_index), limit=len(CORPUS.pmids))}
        assert THREE_CHUNKS not in returned
        assert "S2:123" not in returned


def test_deleting_no_pmids_or_unknown_pmids_changes_nothing(index: VectorIndex) -> None:
    index.delete([])
    index.delete(["999", "100"])  # "100" is a prefix of stored pmids: matching is exact

    assert index.count() == len(CORPUS.chunks)


def test_a_non_numeric_id_is_returned_as_given(index: VectorIndex) -> None:
    hit = index.search(vector_of("S2:123", 0), limit=1)[0]

    assert hit.pmid == "S2:123"


FILTER_CASES = {
    "year_from": SearchFilters(year_from=2018),
    "year_to": SearchFilters(year_to=2015),
    "year_range": SearchFilters(year_from=2014, year_to=2019),
    "single_year": SearchFilters(year_from=2016, year_to=2016),
    "journals": SearchFilters(journals=("Lancet", "JAMA")),
    "publication_type": SearchFilters(publication_types=("Review",)),
    "publication_types": SearchFilters(publication_types=("Meta-Analysis", "Randomized Controlled Trial")),
    "mesh": SearchFilters(mesh=("Aspirin", "Mice")),
    "combined": SearchFilters(year_from=2014, journals=("Lancet", "BMJ", "JAMA"), publication_types=("Review",)),
    "all_kinds": SearchFilters(
        year_to=2022, journals=JOURNALS, publication_types=PUBLICATION_TYPES, mesh=("Humans", "Hypertension")
    ),
    "matching_is_case_sensitive": SearchFilters(journals=("lancet",), mesh=("humans",)),
    "unknown_value": SearchFilters(mesh=("Zebrafish",)),
}


@pytest.mark.parametrize("filters", FILTER_CASES.values(), ids=FILTER_CASES.keys())
def test_a_filtered_search_returns_exactly_the_admitted_articles_in_cosine_order(
    index: VectorIndex, filters: SearchFilters
) -> None:
    query = unit_vectors(1, seed=5)[0]

    hits = index.search(query, limit=len(CORPUS.pmids), filters=filters)

    admitted = {pmid for pmid in CORPUS.pmids if filters.admits(CORPUS.facets(pmid))}
    assert {hit.pmid for hit in hits} == admitted
    expected = CORPUS.ranking(query, filters)
    assert [hit.pmid for hit in hits] == [pmid for pmid, _ in expected]
    assert [hit.score for hit in hits] == pytest.approx([score for _, score in expected], abs=1e-4)


def test_the_filter_cases_are_neither_all_nor_nothing_except_by_design() -> None:
    # Guards the fixture: a filter admitting everything or nothing would not test the filter at all.
    for name, filters in FILTER_CASES.items():
        admitted = [pmid for pmid in CORPUS.pmids if filters.admits(CORPUS.facets(pmid))]
        if name in {"matching_is_case_sensitive", "unknown_value"}:
            assert admitted == [], name
        else:
            assert 0 < len(admitted) < len(CORPUS.pmids), name


def test_an_article_without_a_year_is_excluded_by_any_year_bound(index: VectorIndex) -> None:
    query = vector_of(NO_YEAR, 0)

    assert index.search(query, limit=1)[0].pmid == NO_YEAR
    for filters in (SearchFilters(year_from=1900), SearchFilters(year_to=2100)):
        assert NO_YEAR not in {hit.pmid for hit in index.search(query, limit=len(CORPUS.pmids), filters=filters)}


def test_a_filtered_search_with_a_small_limit_still_fills_it_from_distant_admitted_articles(
    empty: VectorIndex,
) -> None:
    # 40 articles crowd around the query; the 5 admitted ones lie anywhere. Filtering the nearest chunks afterwards
    # would find none of them; filtering inside the search must find the 3 best.
    query = unit_vectors(1, seed=31)[0]
    noise = unit_vectors(40, seed=32) * 0.05
    crowd = (query + noise) / np.linalg.norm(query + noise, axis=1, keepdims=True)
    rare = unit_vectors(5, seed=33)
    chunks = [Chunk(f"c{number}", 0, "", Facets(journal="Crowd")) for number in range(40)]
    chunks += [Chunk(f"r{number}", 0, "", Facets(journal="Rare")) for number in range(5)]
    empty.upsert(chunks, np.vstack([crowd, rare]).astype(np.float32))

    hits = empty.search(query, limit=3, filters=SearchFilters(journals=("Rare",)))

    rare_scores = rare @ query
    assert [hit.pmid for hit in hits] == [f"r{number}" for number in np.argsort(-rare_scores)[:3]]
    assert [hit.score for hit in hits] == pytest.approx(sorted(rare_scores.tolist(), reverse=True)[:3], abs=1e-4)


def test_count_and_exact_ranking_survive_optimize(index: VectorIndex) -> None:
    index.optimize()

    assert index.count() == len(CORPUS.chunks)
    query = unit_vectors(1, seed=77)[0]
    hits = index.search(query, limit=len(CORPUS.pmids), filters=FILTER_CASES["combined"])
    assert [hit.pmid for hit in hits] == [pmid for pmid, _ in CORPUS.ranking(query, FILTER_CASES["combined"])]


def test_the_index_persists_across_close_and_reopen(index: VectorIndex, opener: Opener) -> None:
    index.optimize()
    index.close()

    reopened = opener()

    assert reopened.count() == len(CORPUS.chunks)
    hit = reopened.search(vector_of("S2:123", 0), limit=1)[0]
    assert hit.pmid == "S2:123"
    assert hit.score == pytest.approx(1.0, abs=1e-4)
    filters = FILTER_CASES["all_kinds"]
    query = unit_vectors(1, seed=8)[0]
    hits = reopened.search(query, limit=len(CORPUS.pmids), filters=filters)
    assert [hit.pmid for hit in hits] == [pmid for pmid, _ in CORPUS.ranking(query, filters)]
    reopened.upsert([Chunk("2000", 0, "")], unit_vectors(1, seed=5))
    reopened.delete([THREE_CHUNKS])
    assert reopened.count() == len(CORPUS.chunks) + 1 - 3


def test_closing_twice_is_harmless(index: VectorIndex) -> None:
    index.close()
    index.close()


def test_upsert_rejects_mismatched_lengths(empty: VectorIndex) -> None:
    with pytest.raises(ValueError, match="2 chunks but 1 vectors"):
        empty.upsert([Chunk("1", 0, ""), Chunk("2", 0, "")], unit_vectors(1, seed=3))

    assert empty.count() == 0


def test_upsert_writes_more_points_than_one_internal_batch(empty: VectorIndex) -> None:
    vectors = unit_vectors(1100, seed=11)

    empty.upsert([Chunk(str(number // 2), number % 2, "") for number in range(1100)], vectors)

    assert empty.count() == 1100
    hit = empty.search(vectors[1051], limit=1)[0]
    assert hit.pmid == "525"
    assert hit.score == pytest.approx(1.0, abs=1e-4)


# The helpers both adapters store points with.


def test_point_ids_are_stable_and_distinct_per_chunk() -> None:
    assert point_id("123", 0) == point_id("123", 0)
    assert len({point_id("123", 0), point_id("123", 1), point_id("S2:123", 0), point_id("1231", 0)}) == 4


def test_the_payload_holds_the_article_the_chunk_and_its_facets() -> None:
    chunk = Chunk("42", 2, "text", Facets(year=None, journal="BMJ", publication_types=("Review",), mesh=("Mice",)))

    assert payload(chunk) == {
        "pmid": "42",
        "chunk": 2,
        "year": None,
        "journal": "BMJ",
        "publication_types": ["Review"],
        "mesh": ["Mice"],
    }


# qdrant-client specifics: what only a server location or a local-mode directory can do.


@pytest.mark.filterwarnings("ignore:Failed to obtain server version:UserWarning")
def test_an_unreachable_server_is_a_transient_backend_error_naming_it() -> None:
    index = QdrantClientIndex("http://127.0.0.1:9", "chunks", dimension=DIMENSION)

    with pytest.raises(BackendUnavailableError) as raised:
        index.count()

    assert raised.value.transient is True
    assert "http://127.0.0.1:9" in str(raised.value)
    index.close()


def test_a_second_local_mode_client_on_the_same_directory_is_refused(tmp_path: Path) -> None:
    first = QdrantClientIndex(str(tmp_path / "local"), "chunks", dimension=DIMENSION)
    second = QdrantClientIndex(str(tmp_path / "local"), "chunks", dimension=DIMENSION)
    try:
        first.warm_up()
        with pytest.raises(BackendUnavailableError, match="only one process"):
            second.count()
    finally:
        first.close()
        second.close()


def test_a_collection_of_another_dimension_is_refused_with_a_rebuild_hint(tmp_path: Path) -> None:
    built = QdrantClientIndex(str(tmp_path / "local"), "chunks", dimension=DIMENSION)
    built.warm_up()
    built.close()

    other = QdrantClientIndex(str(tmp_path / "local"), "chunks", dimension=DIMENSION + 4)
    with pytest.raises(BackendUnavailableError, match="rebuild"):
        other.count()
    other.close()


def test_an_in_memory_client_index_works_without_storage() -> None:
    index = QdrantClientIndex(":memory:", "chunks", dimension=DIMENSION)
    try:
        index.upsert(CORPUS.chunks, CORPUS.vectors)
        assert index.count() == len(CORPUS.chunks)
        assert index.search(vector_of(THREE_CHUNKS, 2), limit=1)[0].pmid == THREE_CHUNKS
    finally:
        index.close()


# The registry (the contract above already opens both adapters through it)


def test_the_registry_opens_each_backend_where_its_options_say(tmp_path: Path) -> None:
    edge = build_vector_index(VectorOptions(backend="qdrant_edge", dimension=DIMENSION, folder=tmp_path / "shard"))
    server = build_vector_index(
        VectorOptions(backend="qdrant", dimension=DIMENSION, url="http://127.0.0.1:9", collection="c", api_key="k")
    )

    assert isinstance(edge, QdrantEdgeIndex)
    assert (edge.path, edge.dimension) == (tmp_path / "shard", DIMENSION)
    assert isinstance(server, QdrantClientIndex)
    assert (server.location, server.collection, server.api_key, server.remote) == ("http://127.0.0.1:9", "c", "k", True)


def test_the_registry_refuses_an_unknown_backend_naming_the_known_ones() -> None:
    with pytest.raises(UnknownAdapterError, match=r"unknown vector backend 'faiss' \(available: qdrant_edge, qdrant\)"):
        build_vector_index(VectorOptions(backend="faiss", dimension=DIMENSION))


def test_the_embedded_backend_needs_a_folder() -> None:
    with pytest.raises(ValueError, match="qdrant_edge vector backend needs a folder"):
        build_vector_index(VectorOptions(backend="qdrant_edge", dimension=DIMENSION))


# Library indexes: every chunk has an owner and every search names one, filtered inside the search.


@pytest.fixture(params=[open_edge_library, open_client_library], ids=["qdrant-edge", "qdrant-client-local"])
def library(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorIndex]:
    index: VectorIndex = request.param(tmp_path)
    yield index
    index.close()


def test_an_owners_search_finds_only_their_chunks_even_far_from_a_crowd_of_anothers(library: VectorIndex) -> None:
    # 40 chunks of one owner crowd the query; another's 5 lie anywhere. Filtering the nearest chunks afterwards
    # would find none of the second owner's; the owner filter inside the search finds their 3 best.
    query = unit_vectors(1, seed=41)[0]
    noise = unit_vectors(40, seed=42) * 0.05
    crowd = (query + noise) / np.linalg.norm(query + noise, axis=1, keepdims=True)
    theirs = unit_vectors(5, seed=43)
    chunks = [Chunk(f"DOC:1:{number}", 0, "", Facets(owner="7")) for number in range(40)]
    chunks += [Chunk(f"DOC:2:{number}", 0, "", Facets(owner="8")) for number in range(5)]
    library.upsert(chunks, np.vstack([crowd, theirs]).astype(np.float32))

    hits = library.search(query, limit=3, filters=SearchFilters(owner="8"))
    crowd_hits = library.search(query, limit=50, filters=SearchFilters(owner="7"))

    scores = theirs @ query
    assert [hit.pmid for hit in hits] == [f"DOC:2:{number}" for number in np.argsort(-scores)[:3]]
    assert [hit.score for hit in hits] == pytest.approx(sorted(scores.tolist(), reverse=True)[:3], abs=1e-4)
    assert {hit.pmid for hit in crowd_hits} == {f"DOC:1:{number}" for number in range(40)}
    assert library.search(query, limit=50, filters=SearchFilters(owner="9")) == []


def test_a_library_index_refuses_a_search_without_an_owner_and_a_chunk_without_one(library: VectorIndex) -> None:
    library.upsert([Chunk("DOC:1:0", 0, "", Facets(owner="7"))], unit_vectors(1, seed=1))

    with pytest.raises(OwnershipError):
        library.search(unit_vectors(1, seed=2)[0], limit=5)
    with pytest.raises(OwnershipError):
        library.upsert([Chunk("DOC:1:1", 0, "")], unit_vectors(1, seed=3))
    assert library.count() == 1


def test_a_public_index_refuses_an_owned_chunk_and_finds_nothing_for_an_owner(index: VectorIndex) -> None:
    with pytest.raises(OwnershipError):
        index.upsert([Chunk("DOC:1:0", 0, "", Facets(owner="7"))], unit_vectors(1, seed=1))

    assert index.search(unit_vectors(1, seed=2)[0], limit=5, filters=SearchFilters(owner="7")) == []
    assert index.count() == len(CORPUS.chunks)
