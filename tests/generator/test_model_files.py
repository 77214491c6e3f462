"""Tests for joining a GGUF model from slice packages into a verified cache file."""

from __future__ import annotations

import hashlib
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from generator import model_files
from generator.model_files import ModelFileError, SlicedModel, assemble

SLICES = (b"GGUF" + b"\x01" * 1000, b"\x02" * 777, b"tail-bytes")
JOINED = b"".join(SLICES)


@pytest.fixture
def package_prefix() -> Iterator[str]:
    """A module-name prefix unique to the test; its imported slice modules are forgotten afterwards."""
    prefix = f"fake_slice_{uuid.uuid4().hex[:8]}"
    yield prefix
    for name in [name for name in sys.modules if name.startswith(prefix)]:
        del sys.modules[name]


def write_slice_packages(root: Path, prefix: str, slices: tuple[bytes, ...]) -> None:
    """Packages `<prefix>_part<n>` shaped like the real slice wheels: `get_part_path()` names a data file."""
    for number, data in enumerate(slices, start=1):
        package = root / f"{prefix}_part{number}"
        package.mkdir(parents=True)
        (package / "part.bin").write_bytes(data)
        (package / "__init__.py").write_text(
            "from pathlib import Path\n\n\n"
            "def get_part_path() -> str:\n"
            '    return str(Path(__file__).with_name("part.bin"))\n'
        )


def install_model(
    monkeypatch: pytest.MonkeyPatch,
    packages: Path,
    prefix: str,
    *,
    name: str = "fake-model-0.1b",
    slices: tuple[bytes, ...] = SLICES,
    size: int | None = None,
    sha256: str | None = None,
) -> SlicedModel:
    joined = b"".join(slices)
    model = SlicedModel(
        name=name,
        package_pattern=f"{prefix}_part{{n}}",
        slices=len(slices),
        size=len(joined) if size is None else size,
        sha256=hashlib.sha256(joined).hexdigest() if sha256 is None else sha256,
    )
    monkeypatch.setattr(model_files, "MODELS", {model.name: model})
    monkeypatch.syspath_prepend(str(packages))
    return model


@pytest.fixture
def packages(tmp_path: Path, package_prefix: str) -> Path:
    root = tmp_path / "site-packages"
    write_slice_packages(root, package_prefix, SLICES)
    return root


def test_an_unknown_model_name_is_rejected_listing_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError, match=r"unknown model 'no-such-model'.*qwen2\.5-coder-1\.5b-instruct"):
        assemble("no-such-model", tmp_path / "cache")

    assert not (tmp_path / "cache").exists()


def test_it_joins_the_slices_in_order_into_the_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, packages: Path, package_prefix: str
) -> None:
    model = install_model(monkeypatch, packages, package_prefix)
    cache = tmp_path / "cache" / "models"  # created on demand

    path = assemble(model.name, cache)

    assert path == cache / "fake-model-0.1b.gguf"
    assert path.read_bytes() == JOINED
    assert (cache / "fake-model-0.1b.verified").read_text() == model.sha256
    assert not (cache / "fake-model-0.1b.partial").exists()


def test_a_second_call_reuses_the_verified_file_without_rebuilding_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, packages: Path, package_prefix: str
) -> None:
    model = install_model(monkeypatch, packages, package_prefix)
    first = assemble(model.name, tmp_path / "cache")
    mtime = first.stat().st_mtime_ns
    for data_file in packages.glob("*/part.bin"):
        data_file.unlink()  # a rebuild would now fail: reuse must not read the slices at all

    second = assemble(model.name, tmp_path / "cache")

    assert second == first
    assert second.stat().st_mtime_ns == mtime
    assert second.read_bytes() == JOINED


def test_a_cached_file_without_its_marker_is_rebuilt(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, packages: Path, package_prefix: str
) -> None:
    model = install_model(monkeypatch, packages, package_prefix)
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "fake-model-0.1b.gguf").write_bytes(b"x" * len(JOINED))  # e.g. a copy killed before verification

    path = assemble(model.name, cache)

    assert path.read_bytes() == JOINED


def test_a_cached_file_of_the_wrong_size_is_rebuilt(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, packages: Path, package_prefix: str
) -> None:
    model = install_model(monkeypatch, packages, package_prefix)
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "fake-model-0.1b.gguf").write_bytes(b"truncated")
    (cache / "fake-model-0.1b.verified").write_text(model.sha256)

    path = assemble(model.name, cache)

    assert path.read_bytes() == JOINED


def test_a_cached_file_verified_for_another_hash_is_rebuilt(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, package_prefix: str
) -> None:
    # A new release of the slices with the same size: the old joined file must not be served for it.
    old_slices = (b"a" * 100, b"b" * 50)
    new_slices = (b"c" * 100, b"d" * 50)
    write_slice_packages(tmp_path / "old", f"{package_prefix}_old", old_slices)
    write_slice_packages(tmp_path / "new", f"{package_prefix}_new", new_slices)
    cache = tmp_path / "cache"
    install_model(monkeypatch, tmp_path / "old", f"{package_prefix}_old", slices=old_slices)
    assemble("fake-model-0.1b", cache)

    install_model(monkeypatch, tmp_path / "new", f"{package_prefix}_new", slices=new_slices)
    path = assemble("fake-model-0.1b", cache)

    assert path.read_bytes() == b"".join(new_slices)


def test_a_wrong_hash_raises_and_leaves_no_file_under_the_final_name(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, packages: Path, package_prefix: str
) -> None:
    model = install_model(monkeypatch, packages, package_prefix, sha256="0" * 64)
    cache = tmp_path / "cache"

    with pytest.raises(ModelFileError, match=r"fake-model-0\.1b: joined file has size \d+ and sha256 [0-9a-f]{64}"):
        assemble(model.name, cache)

    assert not (cache / "fake-model-0.1b.gguf").exists()
    assert not (cache / "fake-model-0.1b.verified").exists()
    assert not (cache / "fake-model-0.1b.partial").exists()


def test_a_wrong_size_raises_and_leaves_no_file_under_the_final_name(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, packages: Path, package_prefix: str
) -> None:
    model = install_model(monkeypatch, packages, package_prefix, size=len(JOINED) + 1)
    cache = tmp_path / "cache"

    with pytest.raises(ModelFileError, match=f"expected {len(JOINED) + 1}"):
        assemble(model.name, cache)

    assert not (cache / "fake-model-0.1b.gguf").exists()


def test_a_wrong_hash_never_replaces_a_previously_verified_file_of_another_size(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, packages: Path, package_prefix: str
) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "fake-model-0.1b.gguf").write_bytes(b"stale")
    model = install_model(monkeypatch, packages, package_prefix, sha256="f" * 64)

    with pytest.raises(ModelFileError):
        assemble(model.name, cache)

    assert (cache / "fake-model-0.1b.gguf").read_bytes() == b"stale"


def test_a_missing_slice_package_raises_naming_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, package_prefix: str
) -> None:
    root = tmp_path / "site-packages"
    write_slice_packages(root, package_prefix, SLICES[:2])  # the third slice package is not installed
    model = install_model(monkeypatch, root, package_prefix)
    cache = tmp_path / "cache"

    with pytest.raises(ModelFileError, match=rf"slice package {package_prefix}_part3 is not installed") as raised:
        assemble(model.name, cache)

    assert model.name in str(raised.value)
    assert not (cache / "fake-model-0.1b.gguf").exists()
