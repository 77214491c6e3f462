"""The EvidenceFinder contract, run against every adapter verifier.registry builds: the committed LateFusion tagger
and BM25 + cosine ranking over MiniLM sentence vectors, and the fake. Same assertions, different fixture."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

from indexer.adapter_registry import UnknownAdapterError
from indexer.fake_embedder import FakeEmbedder
from verifier.base import EvidenceFinder, EvidenceFinderOptions
from verifier.registry import build_evidence_finder
from verifier.vectors import SentenceVectors

# Loads a real model (see MARKER_BY_FIXTURE in tests/conftest.py for the automatic cases).
pytestmark = pytest.mark.model

TAGGER: Path = Path(settings.VERIMED.verification.evidence_model)
CLAIM = "No cases of lactic acidosis occurred with metformin."
SENTENCES = [
    "Metformin was given to 300 adults with type 2 diabetes for two years.",
    "No cases of lactic acidosis occurred.",
    "The weather during the study was mild.",
]
STATES_THE_CLAIM, UNRELATED = 1, 2


@pytest.fixture(
    params=[
        pytest.param("late-fusion", marks=pytest.mark.model),
        pytest.param("ranked", marks=pytest.mark.model),
        "fake",
    ]
)
def finder(request: pytest.FixtureRequest) -> EvidenceFinder:
    vectors = None if request.param == "fake" else SentenceVectors(request.getfixturevalue("minilm"))
    return build_evidence_finder(EvidenceFinderOptions(kind=request.param, folder=TAGGER, vectors=vectors))


def test_it_names_its_model(finder: EvidenceFinder) -> None:
    assert isinstance(finder.model_id, str)
    assert finder.model_id


def test_it_scores_every_sentence_and_no_sentences_as_nothing(finder: EvidenceFinder) -> None:
    scores = finder.scores(CLAIM, SENTENCES)

    assert len(scores) == len(SENTENCES)
    assert all(isinstance(score, float) for score in scores)
    assert finder.scores(CLAIM, []) == []


def test_it_is_deterministic(finder: EvidenceFinder) -> None:
    assert finder.scores(CLAIM, SENTENCES) == finder.scores(CLAIM, SENTENCES)


def test_the_sentence_stating_the_claim_scores_highest(finder: EvidenceFinder) -> None:
    scores = finder.scores(CLAIM, SENTENCES)

    assert max(range(len(scores)), key=scores.__getitem__) == STATES_THE_CLAIM


def test_an_unrelated_sentence_is_not_evidence_and_a_higher_score_never_less_so(finder: EvidenceFinder) -> None:
    scores = finder.scores(CLAIM, SENTENCES)

    assert not finder.is_evidence(scores[UNRELATED])
    assert finder.is_evidence(max(scores)) >= finder.is_evidence(min(scores))


# The registry


def test_auto_takes_the_trained_tagger_where_its_folder_holds_one_and_ranking_elsewhere(tmp_path: Path) -> None:
    vectors = SentenceVectors(FakeEmbedder())

    trained = build_evidence_finder(EvidenceFinderOptions(kind="auto", folder=TAGGER, vectors=vectors))
    untrained = build_evidence_finder(EvidenceFinderOptions(kind="auto", folder=tmp_path, vectors=vectors))

    assert trained.model_id == f"late-fusion:{TAGGER.name}"
    assert untrained.model_id == "bm25+cosine"


def test_an_unknown_evidence_finder_is_refused_with_the_known_ones() -> None:
    with pytest.raises(UnknownAdapterError, match=r"'bm25' \(available: auto, late-fusion, ranked, fake\)"):
        build_evidence_finder(EvidenceFinderOptions(kind="bm25"))


def test_ranking_needs_sentence_vectors() -> None:
    with pytest.raises(ValueError, match="needs sentence vectors"):
        build_evidence_finder(EvidenceFinderOptions(kind="ranked"))
