"""Fine-tuning the reranker: a one-output cross-encoder on (question, passage) groups, one positive and a few
negatives each, trained to put the positive first (cross-entropy over the group's scores, as MedCPT's cross-encoder
and most passage rerankers are trained).

The backbone is the packaged all-MiniLM-L6-v2: its encoder has already learnt what a question and a relevant
passage share; the scoring head on top of the [CLS] token is new. Resumable every `resume_every` steps.
"""

from __future__ import annotations

import json
import logging
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from indexer.reranker import RERANKER_LABEL
from indexer.reranker_data import TrainingGroup
from indexer.training_resume import RESUME_FILE, ResumePoint, length_bucketed_batches, optimizer_and_schedule

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RerankerTrainingConfig:
    backbone: str
    output: str
    epochs: int = 1
    groups_per_batch: int = 16
    learning_rate: float = 4e-5
    warmup_ratio: float = 0.1
    weight_decay: float = 0.01
    max_length: int = 128
    seed: int = 13
    threads: int = 2
    resume_every: int = 50


def _encode(tokenizer: Any, groups: Sequence[TrainingGroup], max_length: int) -> tuple[dict[str, torch.Tensor], int]:
    width = 1 + len(groups[0].negatives)
    queries = [group.query for group in groups for _ in range(width)]
    passages = [passage for group in groups for passage in (group.positive, *group.negatives)]
    encoded = tokenizer(
        queries, passages, truncation="only_second", max_length=max_length, padding=True, return_tensors="pt"
    )
    return dict(encoded), width


def train_reranker(
    config: RerankerTrainingConfig,
    groups: Sequence[TrainingGroup],
    *,
    on_progress: Callable[[str], None] = logger.info,
) -> dict[str, object]:
    """Fine-tune on `groups` (all with the same number of negatives) and save fp16 safetensors to `config.output`."""
    if not groups:
        raise ValueError("no training groups")
    if len({len(group.negatives) for group in groups}) != 1:
        raise ValueError("every training group needs the same number of negatives")
    torch.manual_seed(config.seed)
    torch.set_num_threads(config.threads)
    rng = random.Random(config.seed)
    tokenizer = AutoTokenizer.from_pretrained(config.backbone)
    model = AutoModelForSequenceClassification.from_pretrained(
        config.backbone,
        dtype=torch.float32,
        num_labels=1,
        id2label={0: RERANKER_LABEL},
        label2id={RERANKER_LABEL: 0},
    )
    lengths = [len(group.query) + len(group.positive) + sum(map(len, group.negatives)) for group in groups]
    steps_per_epoch = math.ceil(len(groups) / config.groups_per_batch)
    total_steps = steps_per_epoch * config.epochs
    optimizer, schedule = optimizer_and_schedule(
        model,
        learning_rate=config.learning_rate,
        weight_decay=config.weight_decay,
        warmup_ratio=config.warmup_ratio,
        total_steps=total_steps,
    )
    loss_function = torch.nn.CrossEntropyLoss()
    output = Path(config.output)
    output.mkdir(parents=True, exist_ok=True)
    resume = ResumePoint(output / RESUME_FILE)
    history: list[dict[str, object]] = []
    started = time.perf_counter()
    first_epoch, skip_steps, epoch_batches = 1, 0, None
    if (state := resume.load(config)) is not None:
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        schedule.load_state_dict(state["schedule"])
        rng.setstate(state["rng"])
        history = state["history"]
        first_epoch, skip_steps, epoch_batches = state["epoch"], state["step"], state["batches"]
        on_progress(f"resuming at epoch {first_epoch} step {skip_steps}")
    for epoch in range(first_epoch, config.epochs + 1):
        model.train()
        running, counted = 0.0, 0
        batches = epoch_batches or length_bucketed_batches(lengths, config.groups_per_batch, rng)
        epoch_batches = None
        for step, batch in enumerate(batches, start=1):
            if step <= skip_steps:
                continue
            encoded, width = _encode(tokenizer, [groups[index] for index in batch], config.max_length)
            scores = model(**encoded).logits.view(len(batch), width)
            # The positive is column 0 of every group.
            loss = loss_function(scores, torch.zeros(len(batch), dtype=torch.long))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad()
            running += loss.item()
            counted += 1
            if step % 25 == 0:
                done = (epoch - first_epoch) * steps_per_epoch + step - skip_steps
                on_progress(
                    f"epoch {epoch} step {step}/{steps_per_epoch} loss {running / counted:.3f} "
                    f"({(time.perf_counter() - started) / max(done, 1):.2f} s/step)"
                )
                running, counted = 0.0, 0
            if step % config.resume_every == 0:
                resume.save(config, model, optimizer, schedule, rng, epoch, step, batches, history, 0.0)
        skip_steps = 0
        history.append({"epoch": epoch, "seconds": round(time.perf_counter() - started)})
        resume.save(config, model, optimizer, schedule, rng, epoch + 1, 0, None, history, 0.0)
    # fp16 on disk halves the committed size; the reranker loads it back in fp32.
    half = {name: tensor.detach().half() for name, tensor in model.state_dict().items()}
    model.save_pretrained(output, state_dict=half)
    tokenizer.save_pretrained(output)
    resume.clear()
    summary = {
        "config": asdict(config),
        "train_groups": len(groups),
        "negatives_per_group": len(groups[0].negatives),
        "history": history,
        "training_seconds": round(time.perf_counter() - started),
    }
    (output / "training.json").write_text(json.dumps(summary, indent=2))
    return summary
