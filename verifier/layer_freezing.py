"""Training only the top of an encoder: its last N layers and the classification head learn, the rest stays frozen.

Why: a warm start that changes only the top layers can ship as a small overlay on the committed checkpoint
(verifier.checkpoint_overlay) instead of a second full copy of its weights, and the frozen lower layers keep what the
first training taught them (the forgetting seen on Citation-Integrity after full warm starts). Backward passes also
stop at the lowest trainable layer, so a step costs less.
"""

from __future__ import annotations

import re

from transformers import PreTrainedModel

_LAYER_NUMBER = re.compile(r"(?:^|\.)encoder\.layer\.(\d+)\.")


def is_frozen(name: str, *, trainable_layers: int, layer_count: int) -> bool:
    """Whether the parameter `name` stays fixed when only the top `trainable_layers` of `layer_count` learn.

    Embeddings and what every layer shares (mpnet's relative attention bias) sit below the top and stay fixed;
    anything outside the encoder (the classification head, a pooler) always learns."""
    if trainable_layers <= 0 or trainable_layers >= layer_count:
        return False
    match = _LAYER_NUMBER.search(name)
    if match is not None:
        return int(match.group(1)) < layer_count - trainable_layers
    return ".embeddings." in f".{name}" or "relative_attention_bias" in name


def freeze_below_top_layers(model: PreTrainedModel, trainable_layers: int) -> list[str]:
    """Turn off gradients below the top `trainable_layers` (0: everything trains); the names that still learn."""
    layer_count = int(model.config.num_hidden_layers)  # a transformers model's config
    learning = []
    for name, parameter in model.named_parameters():
        frozen = is_frozen(name, trainable_layers=trainable_layers, layer_count=layer_count)
        parameter.requires_grad_(not frozen)
        if not frozen:
            learning.append(name)
    return learning
