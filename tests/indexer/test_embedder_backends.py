"""The embedder's torch, onnx and onnx-int8 backends: offline loading, vector shape and agreement, the export cache."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from indexer import onnx_export
from indexer.embedder import BACKENDS, Backend, SentenceTransformerEmbedder
from indexer.packaged_models import resolve_model_path

# Loads a real model (see MARKER_BY_FIXTURE in tests/conftest.py for the automatic cases).
pytestmark = pytest.mark.model

REPO = Path(__file__).resolve().parents[2]
TEXTS = [
    "Metformin lowers hepatic glucose production in patients with type 2 diabetes.",
    "BRCA1 mutations raise the lifetime risk of breast and ovarian cancer.",
    "x",
    "Ünïcode café: β-lactamase inhibitors restore amoxicillin activity.",
    # Longer than the 256-token window, so truncation has to match sentence-transformers'.
    " ".join(["Randomised controlled trials of statins reduced cardiovascular events in older adults."] * 30),
]


@pytest.fixture(scope="module")
def offline() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setenv("TRANSFORMERS_OFFLINE", "1")
        yield


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("model-cache")


@pytest.fixture(scope="module")
def reference(offline: None) -> SentenceTransformerEmbedder:
    embedder = SentenceTransformerEmbedder(threads=2)
    embedder.warm_up()
    return embedder


@pytest.fixture(scope="module")
def site_model_snapshot() -> dict[str, float]:
    """The packaged model folder as it was before any export ran."""
    return _snapshot(Path(resolve_model_path("minilm")))


@pytest.fixture(scope="module")
def embedders(
    offline: None, cache_dir: Path, site_model_snapshot: dict[str, float]
) -> dict[Backend, SentenceTransformerEmbedder]:
    loaded = {}
    for backend in BACKENDS:
        embedder = SentenceTransformerEmbedder(threads=2, backend=backend, cache_dir=cache_dir)
        embedder.warm_up()
        loaded[backend] = embedder
    return loaded


def _snapshot(folder: Path) -> dict[str, float]:
    return {str(path.relative_to(folder)): path.stat().st_mtime for path in folder.rglob("*")}


def _cosines(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    return np.asarray((left * right).sum(axis=1))


@pytest.mark.parametrize("backend", BACKENDS)
def test_each_backend_returns_normalised_float32_vectors_of_the_model_dimension(
    embedders: dict[Backend, SentenceTransformerEmbedder], backend: Backend
) -> None:
    vectors = embedders[backend].embed(TEXTS)

    assert vectors.dtype == np.float32
    assert vectors.shape == (len(TEXTS), 384)
    assert embedders[backend].dimension == 384
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_onnx_fp32_vectors_match_torch(
    embedders: dict[Backend, SentenceTransformerEmbedder], reference: SentenceTransformerEmbedder
) -> None:
    agreement = _cosines(embedders["onnx"].embed(TEXTS), reference.embed(TEXTS))

    assert agreement.min() > 0.9999


def test_onnx_int8_vectors_stay_close_to_torch(
    embedders: dict[Backend, SentenceTransformerEmbedder], reference: SentenceTransformerEmbedder
) -> None:
    agreement = _cosines(embedders["onnx-int8"].embed(TEXTS), reference.embed(TEXTS))

    # Measured 0.994 mean over BioASQ abstracts; a one-letter text is the worst case seen (0.978).
    assert agreement.mean() > 0.985
    assert agreement.min() > 0.97


def test_padding_in_a_batch_does_not_change_a_texts_fp32_vector(
    embedders: dict[Backend, SentenceTransformerEmbedder],
) -> None:
    embedder = embedders["onnx"]
    together = embedder.embed(TEXTS)
    alone = np.vstack([embedder.embed([text]) for text in TEXTS])

    assert _cosines(together, alone).min() > 0.9999


def test_int8_vectors_move_with_their_batch_only_within_quantization_noise(
    embedders: dict[Backend, SentenceTransformerEmbedder],
) -> None:
    # Dynamic int8 quantizes activations with one scale per batch tensor, so a text's vector depends a little on
    # its batch neighbours (measured 0.993 worst case over BioASQ abstracts; a one-letter text: 0.977).
    embedder = embedders["onnx-int8"]
    together = embedder.embed(TEXTS)
    alone = np.vstack([embedder.embed([text]) for text in TEXTS])

    assert _cosines(together, alone).min() > 0.97


@pytest.mark.parametrize("backend", ["onnx", "onnx-int8"])
def test_token_lengths_and_window_match_torch(
    embedders: dict[Backend, SentenceTransformerEmbedder], reference: SentenceTransformerEmbedder, backend: Backend
) -> None:
    assert embedders[backend].token_lengths(TEXTS) == reference.token_lengths(TEXTS)
    assert embedders[backend].max_tokens == reference.max_tokens == 256


def test_empty_input_gives_an_empty_matrix(embedders: dict[Backend, SentenceTransformerEmbedder]) -> None:
    assert embedders["onnx-int8"].embed([]).shape == (0, 384)
    assert embedders["onnx-int8"].token_lengths([]) == []


def test_export_writes_only_into_the_cache_dir(
    embedders: dict[Backend, SentenceTransformerEmbedder], cache_dir: Path, site_model_snapshot: dict[str, float]
) -> None:
    assert _snapshot(Path(resolve_model_path("minilm"))) == site_model_snapshot
    (exported,) = (cache_dir / "embedders").iterdir()
    assert (exported / onnx_export.FP32_FILE).is_file()
    assert (exported / onnx_export.INT8_FILE).is_file()
    assert (exported / "tokenizer.json").is_file()  # the copy of the model folder the export was made from
    assert not [path for path in cache_dir.rglob(".export-*")]  # no staging folder left behind


def test_a_second_load_reuses_the_export(
    embedders: dict[Backend, SentenceTransformerEmbedder], cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exported = cache_dir / "embedders"
    before = _snapshot(exported)

    def refuse(*_: object) -> None:
        raise AssertionError("exported again")

    monkeypatch.setattr(onnx_export, "export_onnx", refuse)
    again = SentenceTransformerEmbedder(backend="onnx-int8", cache_dir=cache_dir, threads=1)

    np.testing.assert_allclose(again.embed(TEXTS[:2]), embedders["onnx-int8"].embed(TEXTS[:2]), atol=1e-5)
    assert _snapshot(exported) == before


def test_onnx_backend_serves_without_importing_torch(
    embedders: dict[Backend, SentenceTransformerEmbedder], cache_dir: Path
) -> None:
    script = (
        "import sys; from pathlib import Path; from indexer.embedder import SentenceTransformerEmbedder as E; "
        f"E(backend='onnx-int8', cache_dir=Path({str(cache_dir)!r}), threads=1).embed(['aspirin']); "
        "print('torch' in sys.modules)"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True, check=True)

    assert done.stdout.strip() == "False"


def test_onnx_backends_refuse_to_run_without_a_cache_dir() -> None:
    with pytest.raises(ValueError, match="cache_dir"):
        SentenceTransformerEmbedder(backend="onnx")


def test_an_unknown_backend_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown embedding backend"):
        SentenceTransformerEmbedder(backend="tensorrt")  # type: ignore[arg-type]
