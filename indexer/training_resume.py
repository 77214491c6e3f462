"""What the reranker's and the verifier's training loops share: their optimiser and schedule, and resumable runs
(model, optimiser, schedule and the epoch's batch order every few steps, so that a killed run, by a session's time
limit or a machine taken back, goes on where it stopped instead of starting over)."""

from __future__ import annotations

import logging
import random
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

logger = logging.getLogger(__name__)

RESUME_FILE = "resume.pt"


class ResumePoint:
    """Kept beside the model being trained, only while it trains. `config` is the run's configuration dataclass: a
    point written under another configuration is ignored rather than mixed in."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self, config: Any) -> dict[str, Any] | None:
        if not self.path.exists():
            return None
        state: dict[str, Any] = torch.load(self.path, weights_only=False)
        if state.get("config") != asdict(config):
            logger.warning("ignoring %s: it was written with another configuration", self.path)
            return None
        return state

    def save(
        self,
        config: Any,
        model: torch.nn.Module,
        optimizer: torch.optim.Optimizer,
        schedule: Any,
        rng: random.Random,
        epoch: int,
        step: int,
        batches: list[list[int]] | None,
        history: list[dict[str, object]],
        best_score: float,
    ) -> None:
        state = {
            "config": asdict(config),
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "schedule": schedule.state_dict(),
            "rng": rng.getstate(),
            "epoch": epoch,
            "step": step,
            "batches": batches,
            "history": history,
            "best_score": best_score,
        }
        partial = self.path.with_suffix(".partial")
        torch.save(state, partial)
        partial.replace(self.path)  # atomic: a kill while writing leaves the previous point intact

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)


def optimizer_and_schedule(
    model: torch.nn.Module, *, learning_rate: float, weight_decay: float, warmup_ratio: float, total_steps: int
) -> tuple[torch.optim.Optimizer, Any]:
    """AdamW without weight decay on biases and LayerNorm weights, and a linear schedule with warm-up."""
    from transformers import get_linear_schedule_with_warmup

    no_decay = ("bias", "LayerNorm.weight", "LayerNorm.bias")
    parameters = [
        {"params": [p for n, p in model.named_parameters() if not n.endswith(no_decay)], "weight_decay": weight_decay},
        {"params": [p for n, p in model.named_parameters() if n.endswith(no_decay)], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(parameters, lr=learning_rate)
    schedule = get_linear_schedule_with_warmup(  # type: ignore[no-untyped-call]
        optimizer, int(warmup_ratio * total_steps), total_steps
    )
    return optimizer, schedule


def length_bucketed_batches(lengths: list[int], batch_size: int, rng: random.Random) -> list[list[int]]:
    """Shuffled batches of similar length: far less padding than random batches, still a random order."""
    order = list(range(len(lengths)))
    rng.shuffle(order)
    pool = batch_size * 50
    batches: list[list[int]] = []
    for start in range(0, len(order), pool):
        chunk = sorted(order[start : start + pool], key=lengths.__getitem__)
        batches.extend(chunk[index : index + batch_size] for index in range(0, len(chunk), batch_size))
    rng.shuffle(batches)
    return batches
