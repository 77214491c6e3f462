"""A checkpoint stored as the tensors it changed on top of another committed checkpoint.

Why: a warm start of the 110M-parameter verifier is a second 219 MB file, more than one submission of this repository
may carry. A warm start that trains only the top layers (verifier.layer_freezing) changes a third of the tensors, so
the directory keeps those alone (`overlay.safetensors`) and names its base (`overlay.json`, with the base weights'
SHA-256, so an overlay is never applied to weights it was not trained on). Everything else in the directory (config,
tokenizer, decision rule, model card) is its own, as in any checkpoint.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file
from transformers import AutoConfig, AutoModelForSequenceClassification

from indexer.file_digest import file_sha256

OVERLAY_META = "overlay.json"
OVERLAY_WEIGHTS = "overlay.safetensors"
FULL_WEIGHTS = "model.safetensors"
# What a checkpoint directory carries beside its weights: copied from the trained directory into the overlay's.
_COMPANIONS = ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt")


class OverlayError(ValueError):
    """An overlay whose base is missing or is not the checkpoint it was made on."""


@dataclass(frozen=True)
class Overlay:
    directory: Path
    base: Path
    base_sha256: str

    @classmethod
    def read(cls, directory: Path) -> Overlay | None:
        meta_path = directory / OVERLAY_META
        if not meta_path.is_file():
            return None
        meta = json.loads(meta_path.read_text())
        return cls(directory, (directory / meta["base"]).resolve(), meta["base_sha256"])

    def check_base(self) -> None:
        weights = self.base / FULL_WEIGHTS
        if not weights.is_file():
            raise OverlayError(f"{self.directory.name} is an overlay on {self.base}, which has no {FULL_WEIGHTS}")
        if file_sha256(weights) != self.base_sha256:
            raise OverlayError(
                f"{self.directory.name} was made on other weights than {weights} holds now (SHA-256 differs)"
            )

    def tensors(self) -> dict[str, torch.Tensor]:
        return load_file(str(self.directory / OVERLAY_WEIGHTS))


def load_sequence_classifier(path: str | Path, **kwargs: Any) -> Any:  # a PreTrainedModel, untyped upstream
    """`AutoModelForSequenceClassification.from_pretrained`, which also reads an overlay directory: its base's
    weights with the overlay's tensors put in their place, under the overlay's own config."""
    directory = Path(path)
    overlay = Overlay.read(directory) if directory.is_dir() else None
    if overlay is None:
        return AutoModelForSequenceClassification.from_pretrained(str(path), **kwargs)
    overlay.check_base()
    config = AutoConfig.from_pretrained(str(directory))
    for key in ("num_labels", "id2label", "label2id"):
        if key in kwargs:
            setattr(config, key, kwargs.pop(key))
    model = AutoModelForSequenceClassification.from_pretrained(str(overlay.base), config=config, **kwargs)
    dtype = next(model.parameters()).dtype
    changed = {name: tensor.to(dtype) for name, tensor in overlay.tensors().items()}
    missing = sorted(set(changed) - set(model.state_dict()))
    if missing:
        raise OverlayError(f"{directory.name}'s overlay names tensors its base has not: {missing[:3]}")
    model.load_state_dict(changed, strict=False)
    model.name_or_path = str(directory)
    return model


def changed_tensors(trained: Mapping[str, torch.Tensor], base: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The tensors of `trained` that differ from `base` in any value (or that `base` lacks)."""
    if set(base) - set(trained):
        raise OverlayError(f"the trained weights lack tensors of the base: {sorted(set(base) - set(trained))[:3]}")
    return {
        name: tensor
        for name, tensor in trained.items()
        if name not in base or base[name].shape != tensor.shape or not torch.equal(base[name], tensor)
    }


def write_overlay(*, trained: Path, base: Path, output: Path) -> dict[str, object]:
    """Store the full checkpoint `trained` as an overlay on `base` (itself a full checkpoint) in `output`: the changed
    tensors, the base's path relative to `output` and its hash, and the trained directory's other files."""
    if Overlay.read(base) is not None:
        raise OverlayError(f"{base} is itself an overlay: make the new one on its base")
    trained_tensors = load_file(str(trained / FULL_WEIGHTS))
    base_tensors = load_file(str(base / FULL_WEIGHTS))
    changed = changed_tensors(trained_tensors, base_tensors)
    output.mkdir(parents=True, exist_ok=True)
    save_file({name: tensor.contiguous() for name, tensor in changed.items()}, str(output / OVERLAY_WEIGHTS))
    for companion in [*_COMPANIONS, "training.json"]:
        if (trained / companion).is_file() and trained.resolve() != output.resolve():
            shutil.copyfile(trained / companion, output / companion)
    meta = {
        "base": os.path.relpath(base.resolve(), output.resolve()),
        "base_sha256": file_sha256(base / FULL_WEIGHTS),
        "changed_tensors": len(changed),
        "of_tensors": len(trained_tensors),
        "changed_parameters": int(sum(tensor.numel() for tensor in changed.values())),
    }
    (output / OVERLAY_META).write_text(json.dumps(meta, indent=2) + "\n")
    return meta
