"""A warm start stored as an overlay reads exactly as the full checkpoint it was made from, and only on its base."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file
from transformers import BertConfig, BertForSequenceClassification

from verifier.checkpoint_overlay import (
    OVERLAY_META,
    OVERLAY_WEIGHTS,
    OverlayError,
    changed_tensors,
    load_sequence_classifier,
    write_overlay,
)
from verifier.cross_encoder import CrossEncoderVerifier
from verifier.layer_freezing import freeze_below_top_layers, is_frozen

MINILM = Path(__file__).resolve().parents[2] / "verifier" / "models" / "verimed-minilm-verifier"
LABELS = ["SUPPORT", "CONTRADICT", "NO_EVIDENCE"]


def tiny_checkpoint(directory: Path, *, seed: int) -> BertForSequenceClassification:
    """A four-layer BERT with our labels and the MiniLM's tokenizer (same vocabulary), saved as fp16 like ours."""
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=30522,
        hidden_size=32,
        num_hidden_layers=4,
        num_attention_heads=2,
        intermediate_size=64,
        num_labels=3,
        id2label=dict(enumerate(LABELS)),
        label2id={label: index for index, label in enumerate(LABELS)},
    )
    model = BertForSequenceClassification(config).eval()
    model.save_pretrained(directory, state_dict={k: v.half() for k, v in model.state_dict().items()})
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(MINILM / name, directory / name)
    return model


def warm_start_of(base: Path, trained: Path) -> None:
    """What a top-layers warm start leaves: the base's files with the last layer and the head changed."""
    shutil.copytree(base, trained)
    model = load_sequence_classifier(trained, dtype=torch.float32)
    learning = freeze_below_top_layers(model, 1)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if name in learning:
                parameter.add_(0.05)
    model.save_pretrained(trained, state_dict={k: v.half() for k, v in model.state_dict().items()})


@pytest.fixture
def checkpoints(tmp_path: Path) -> tuple[Path, Path, Path]:
    base, trained, overlay = tmp_path / "base", tmp_path / "trained", tmp_path / "overlay"
    tiny_checkpoint(base, seed=1)
    warm_start_of(base, trained)
    write_overlay(trained=trained, base=base, output=overlay)
    return base, trained, overlay


def test_only_the_top_layers_and_the_head_learn() -> None:
    assert is_frozen("bert.embeddings.word_embeddings.weight", trainable_layers=6, layer_count=12)
    assert is_frozen("mpnet.encoder.relative_attention_bias.weight", trainable_layers=6, layer_count=12)
    assert is_frozen("mpnet.encoder.layer.5.attention.attn.q.weight", trainable_layers=6, layer_count=12)
    assert not is_frozen("mpnet.encoder.layer.6.attention.attn.q.weight", trainable_layers=6, layer_count=12)
    assert not is_frozen("classifier.out_proj.weight", trainable_layers=6, layer_count=12)
    assert not is_frozen("bert.pooler.dense.weight", trainable_layers=6, layer_count=12)
    # 0 (and anything covering every layer) trains the whole model.
    assert not is_frozen("bert.embeddings.word_embeddings.weight", trainable_layers=0, layer_count=12)
    assert not is_frozen("bert.encoder.layer.0.output.dense.weight", trainable_layers=12, layer_count=12)


def test_freezing_turns_gradients_off_below_the_top(tmp_path: Path) -> None:
    model = tiny_checkpoint(tmp_path / "m", seed=2)
    learning = set(freeze_below_top_layers(model, 2))
    for name, parameter in model.named_parameters():
        assert parameter.requires_grad == (name in learning)
    assert any(name.startswith("bert.encoder.layer.3.") for name in learning)
    assert any(name.startswith("bert.encoder.layer.2.") for name in learning)
    assert not any(name.startswith(("bert.encoder.layer.1.", "bert.encoder.layer.0.")) for name in learning)
    assert "classifier.weight" in learning
    assert not any("embeddings" in name for name in learning)


def test_the_overlay_keeps_only_the_changed_tensors(checkpoints: tuple[Path, Path, Path]) -> None:
    base, trained, overlay = checkpoints
    stored = load_file(str(overlay / OVERLAY_WEIGHTS))
    full = load_file(str(trained / "model.safetensors"))
    assert set(stored) == set(changed_tensors(full, load_file(str(base / "model.safetensors"))))
    assert stored
    assert len(stored) < len(full) / 2
    assert all(name.startswith(("bert.encoder.layer.3.", "classifier.", "bert.pooler.")) for name in stored)
    meta = json.loads((overlay / OVERLAY_META).read_text())
    assert meta["base"] == "../base"
    assert meta["changed_tensors"] == len(stored)
    assert not (overlay / "model.safetensors").exists()


def test_an_overlay_reads_exactly_as_the_full_checkpoint(checkpoints: tuple[Path, Path, Path]) -> None:
    _, trained, overlay = checkpoints
    pairs = [("Metformin lowers HbA1c.", "Metformin lowered HbA1c by 1.2 points."), ("Aspirin.", "Knee pain.")]
    from_full = CrossEncoderVerifier.load(trained).logits(pairs)
    from_overlay = CrossEncoderVerifier.load(overlay).logits(pairs)
    assert from_overlay.tolist() == from_full.tolist()
    # And the base alone reads differently, so the overlay's tensors are what made it equal.
    assert CrossEncoderVerifier.load(checkpoints[0]).logits(pairs).tolist() != from_full.tolist()


def test_an_overlay_refuses_other_base_weights(checkpoints: tuple[Path, Path, Path], tmp_path: Path) -> None:
    base, _, overlay = checkpoints
    tiny_checkpoint(base, seed=3)  # the base replaced by other weights, as a later commit might
    with pytest.raises(OverlayError, match="other weights"):
        load_sequence_classifier(overlay)
    shutil.rmtree(base)
    with pytest.raises(OverlayError, match=r"has no model\.safetensors"):
        load_sequence_classifier(overlay)


def test_an_overlay_is_never_made_on_an_overlay(checkpoints: tuple[Path, Path, Path], tmp_path: Path) -> None:
    _, trained, overlay = checkpoints
    with pytest.raises(OverlayError, match="itself an overlay"):
        write_overlay(trained=trained, base=overlay, output=tmp_path / "again")


def test_training_can_start_from_an_overlay_with_new_labels_kept(checkpoints: tuple[Path, Path, Path]) -> None:
    _, trained, overlay = checkpoints
    model = load_sequence_classifier(
        overlay,
        dtype=torch.float32,
        num_labels=3,
        id2label=dict(enumerate(LABELS)),
        label2id={label: index for index, label in enumerate(LABELS)},
    )
    reference = load_sequence_classifier(trained, dtype=torch.float32)
    for name, tensor in reference.state_dict().items():
        assert torch.equal(model.state_dict()[name], tensor), name
    assert model.config.id2label == dict(enumerate(LABELS))
