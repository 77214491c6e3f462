"""The Embedder contract, run against the packaged MiniLM and the fake embedder. Same assertions, different fixture."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from indexer.adapter_registry import UnknownAdapterError
from indexer.base import Embedder, EmbedderOptions
from indexer.embedder import SentenceTransformerEmbedder
from indexer.fake_embedder import FakeEmbedder
from indexer.registry import build_embedder

# Loads a real model (see MARKER_BY_FIXTURE in tests/conftest.py for the automatic cases).
pytestmark = pytest.mark.model

TEXTS = ["Metformin lowers blood glucose.", "Statins lower LDL cholesterol.", "It rained in Paris all week."]


@pytest.fixture(params=[pytest.param("minilm", marks=pytest.mark.model), "fake"])
def embedder(request: pytest.FixtureRequest) -> Embedder:
    if request.param == "minilm":
        minilm: Embedder = request.getfixturevalue("minilm")
        return minilm
    return build_embedder(EmbedderOptions(backend="fake", model="minilm"))


def test_it_names_its_model_and_dimension(embedder: Embedder) -> None:
    assert embedder.model_id
    assert embedder.dimension > 0
    assert embedder.max_tokens > 0


def test_it_embeds_each_text_as_a_unit_vector(embedder: Embedder) -> None:
    vectors = embedder.embed(TEXTS)

    assert vectors.shape == (len(TEXTS), embedder.dimension)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_no_texts_give_an_empty_matrix(embedder: Embedder) -> None:
    assert embedder.embed([]).shape == (0, embedder.dimension)


def test_it_is_deterministic(embedder: Embedder) -> None:
    np.testing.assert_allclose(embedder.embed(TEXTS), embedder.embed(TEXTS), atol=1e-6)


def test_a_text_on_the_same_topic_is_closer_than_an_unrelated_one(embedder: Embedder) -> None:
    query, related, unrelated = embedder.embed(
        ["Does metformin lower glucose?", "Metformin lowered glucose in adults.", "It rained in Paris all week."]
    )

    assert float(query @ related) > float(query @ unrelated)


def test_token_lengths_count_special_tokens_and_grow_with_the_text(embedder: Embedder) -> None:
    short, longer = embedder.token_lengths(["Metformin.", "Metformin lowers blood glucose in adults."])

    assert short >= 3  # the word, the full stop, and at least one special token
    assert longer > short
    assert embedder.token_lengths([]) == []


# The registry


@pytest.mark.parametrize("backend", ["torch", "onnx", "onnx-int8"])
def test_the_registry_builds_sentence_transformers_without_loading_the_model(backend: str, tmp_path: Path) -> None:
    options = EmbedderOptions(backend=backend, model="minilm", threads=1, cache_dir=tmp_path)

    embedder = build_embedder(options)

    assert isinstance(embedder, SentenceTransformerEmbedder)
    assert (embedder.backend, embedder.threads, embedder.dimension) == (backend, 1, 384)
    assert embedder._model is None


def test_the_registry_builds_the_fake_for_fast_tests() -> None:
    assert isinstance(build_embedder(EmbedderOptions(backend="fake", model="minilm")), FakeEmbedder)


def test_the_registry_refuses_an_unknown_backend_naming_the_known_ones() -> None:
    with pytest.raises(UnknownAdapterError, match=r"'tensorrt' \(available: torch, onnx, onnx-int8, fake\)"):
        build_embedder(EmbedderOptions(backend="tensorrt", model="minilm"))
