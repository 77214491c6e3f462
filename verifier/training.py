"""Fine-tuning the claim verifier: a 3-way cross-encoder on (claim, passage) pairs from the shared training splits.

The passage is the document's title with either its whole abstract ("abstract" input) or the few sentences an
evidence selector picks ("evidence" input). For evidence input a SUPPORT or CONTRADICT pair always keeps its
rationale sentences, topped up with the selector's next picks, and a NO_EVIDENCE pair gets the selector's top
picks: both classes then look like what the product shows the verifier. MiniCheck's hard negatives (the same
document with its rationale sentences removed, labelled NO_EVIDENCE) teach it that a same-topic passage is not
evidence.
"""

from __future__ import annotations

import json
import logging
import math
import random
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from transformers import AutoTokenizer

from indexer.training_resume import RESUME_FILE, ResumePoint, length_bucketed_batches, optimizer_and_schedule
from verifier.checkpoint_overlay import load_sequence_classifier
from verifier.cross_encoder import CrossEncoderVerifier
from verifier.datasets import LABELS, ClaimDocumentPair
from verifier.layer_freezing import freeze_below_top_layers
from verifier.metrics import score_classifier
from verifier.pairs import verifier_passage
from verifier.precision import autocast
from verifier.vectors import SentenceVectors
from verifier.verdicts import NO_EVIDENCE

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Example:
    claim: str
    passage: str
    label: str


def evidence_choice(pair: ClaimDocumentPair, ranked: Sequence[int], k: int) -> list[int]:
    """The rationale (at most k sentences) topped up with the best-ranked other sentences."""
    chosen = list(pair.rationale[:k])
    for index in ranked:
        if len(chosen) >= k:
            break
        if index not in chosen:
            chosen.append(index)
    return chosen


def build_examples(
    pairs: Sequence[ClaimDocumentPair],
    vectors: SentenceVectors | None,
    *,
    input_mode: str,
    evidence_sentences: int = 3,
    hard_negative_fraction: float = 0.0,
    seed: int = 13,
) -> list[Example]:
    """`hard_negative_fraction` of the pairs with rationales also give a rationale-free NO_EVIDENCE example."""
    rng = random.Random(seed)
    examples: list[Example] = []
    for pair in pairs:
        document = pair.document
        if input_mode == "abstract":
            examples.append(Example(pair.claim, verifier_passage(document.title, document.sentences), pair.label))
            continue
        if vectors is None:
            raise ValueError("evidence input needs sentence vectors")
        ranked = vectors.ranked(pair.claim, document.sentences)
        chosen = evidence_choice(pair, ranked, evidence_sentences)
        examples.append(Example(pair.claim, verifier_passage(document.title, document.sentences, chosen), pair.label))
        if pair.rationale and rng.random() < hard_negative_fraction:
            remaining = [index for index in ranked if index not in pair.rationale][:evidence_sentences]
            if remaining:
                passage = verifier_passage(document.title, document.sentences, remaining)
                examples.append(Example(pair.claim, passage, NO_EVIDENCE))
    return examples


def gold_free_examples(
    pairs: Sequence[ClaimDocumentPair],
    choose: Callable[[ClaimDocumentPair], list[int]] | None,
) -> list[Example]:
    """Evaluation inputs: the sentences come from the selector alone, never from the gold rationale."""
    examples = []
    for pair in pairs:
        chosen = None if choose is None else choose(pair)
        examples.append(
            Example(pair.claim, verifier_passage(pair.document.title, pair.document.sentences, chosen), pair.label)
        )
    return examples


@dataclass
class TrainingConfig:
    backbone: str
    output: str
    input_mode: str = "evidence"
    evidence_sentences: int = 3
    hard_negative_fraction: float = 0.35
    epochs: int = 3
    learning_rate: float = 4e-5
    batch_size: int = 16
    warmup_ratio: float = 0.06
    weight_decay: float = 0.01
    max_length: int = 192
    seed: int = 13
    threads: int = 2
    train_splits: list[str] = field(default_factory=list)
    dev_splits: list[str] = field(default_factory=list)
    extra_data: list[str] = field(default_factory=list)  # bioasq, pubmedqa (see verifier.extra_training)
    counterfactual_fraction: float = 0.0  # share of SUPPORT pairs that also give an edited CONTRADICT one
    # Caps on what one run reads (0: everything): product-shaped pairs (verifier.product_pairs, label-balanced) and
    # the gold and extra examples beside them (a seeded sample), so that a warm start fits a session's time.
    product_shaped_pairs: int = 0
    gold_examples: int = 0
    # Only the encoder's top layers and the head learn (0: all of it): see verifier.layer_freezing.
    trainable_layers: int = 0
    resume_every: int = 100  # steps between resumable checkpoints
    precision: str = "fp32"  # or "bf16" (autocast) or "auto": see verifier.precision
    # Distillation (verifier.distillation): the teacher checkpoint whose soft labels the student learns, the weight of
    # the gold label against them on gold examples, their temperature, and the unlabelled transfer sources.
    teacher: str = ""
    distill_alpha: float = 0.5
    distill_temperature: float = 2.0
    transfer_data: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SoftTargets:
    """The teacher's label distribution for every training example (rows in LABELS order) and which examples also
    carry a gold label (the transfer pairs do not)."""

    probabilities: np.ndarray
    gold: np.ndarray  # bool per example


def distillation_loss(
    logits: torch.Tensor,
    labels: torch.Tensor,
    teacher: torch.Tensor,
    gold: torch.Tensor,
    *,
    class_weights: torch.Tensor,
    alpha: float,
    temperature: float,
) -> torch.Tensor:
    """Per example: the KL divergence from the teacher's distribution at `temperature` (scaled by its square, so the
    gradients keep their size), mixed with the weighted gold cross-entropy by `alpha` where a gold label exists."""
    log_student = torch.log_softmax(logits / temperature, dim=-1)
    soft = (teacher * (torch.log(teacher.clamp_min(1e-8)) - log_student)).sum(dim=-1) * temperature**2
    hard = torch.nn.functional.cross_entropy(logits, labels, weight=class_weights, reduction="none")
    mixed = torch.where(gold, alpha * hard + (1 - alpha) * soft, soft)
    return mixed.mean()


def _class_weights(labels: Sequence[str]) -> torch.Tensor:
    """sqrt of inverse frequency: CONTRADICT is the rarest and the one a reader most needs caught."""
    counts = Counter(labels)
    weights = [math.sqrt(len(labels) / (len(LABELS) * max(counts[label], 1))) for label in LABELS]
    return torch.tensor(weights, dtype=torch.float32)


def evaluate_examples(verifier: CrossEncoderVerifier, examples: Sequence[Example]) -> dict[str, object]:
    return score_classifier(verifier, [(e.claim, e.passage) for e in examples], [e.label for e in examples])


def _f1s(scores: dict[str, dict[str, object]]) -> str:
    return json.dumps({name: score["macro_f1"] for name, score in scores.items()})


def train_verifier(
    config: TrainingConfig,
    train: Sequence[Example],
    dev: Mapping[str, Sequence[Example]],
    *,
    on_progress: Callable[[str], None] = logger.info,
    stop_after_examples: int = 0,
    eval_every: int = 0,
    record: Mapping[str, object] | None = None,
    soft_targets: SoftTargets | None = None,
) -> dict[str, object]:
    """Fine-tune, keep the evaluation with the best mean macro-F1 over the dev sets, save it in fp16 safetensors.

    `stop_after_examples` ends the run early (an early gate) with its resume point kept: the schedule is the whole
    run's, so running again with a larger number (or none) goes on as if it had never stopped. `eval_every` steps the
    dev sets are scored inside an epoch too (the learning curve; 0: at each epoch's end only). Neither is part of the
    run's identity: a resumed run may change both. `record` goes into training.json as it is (what the extra
    training files gave: `verifier.reviewed_flags.extra_report`). `soft_targets` makes it a distillation run: the loss
    is `distillation_loss` with the config's alpha and temperature."""
    torch.manual_seed(config.seed)
    torch.set_num_threads(config.threads)
    rng = random.Random(config.seed)
    tokenizer = AutoTokenizer.from_pretrained(config.backbone)
    model = load_sequence_classifier(
        config.backbone,
        dtype=torch.float32,  # a checkpoint stored in fp16 (ours) trains in fp32
        num_labels=len(LABELS),
        id2label=dict(enumerate(LABELS)),
        label2id={label: index for index, label in enumerate(LABELS)},
    )
    learning = freeze_below_top_layers(model, config.trainable_layers)
    on_progress(f"{len(learning)} of {len(list(model.parameters()))} parameter tensors learn")
    label_ids = torch.tensor([LABELS.index(example.label) for example in train])
    lengths = [len(e.claim) + len(e.passage) for e in train]
    steps_per_epoch = math.ceil(len(train) / config.batch_size)
    total_steps = steps_per_epoch * config.epochs
    optimizer, schedule = optimizer_and_schedule(
        model,
        learning_rate=config.learning_rate,
        weight_decay=config.weight_decay,
        warmup_ratio=config.warmup_ratio,
        total_steps=total_steps,
    )
    if soft_targets is not None and len(soft_targets.probabilities) != len(train):
        raise ValueError(f"{len(soft_targets.probabilities)} teacher rows for {len(train)} training examples")
    gold_mask = np.ones(len(train), dtype=bool) if soft_targets is None else soft_targets.gold
    class_weights = _class_weights([e.label for e, is_gold in zip(train, gold_mask, strict=True) if is_gold])
    loss_function = torch.nn.CrossEntropyLoss(weight=class_weights)

    def batch_loss(logits: torch.Tensor, batch: list[int]) -> Any:
        if soft_targets is None:
            return loss_function(logits, label_ids[batch])
        return distillation_loss(
            logits,
            label_ids[batch],
            torch.from_numpy(soft_targets.probabilities[batch]),
            torch.from_numpy(soft_targets.gold[batch]),
            class_weights=class_weights,
            alpha=config.distill_alpha,
            temperature=config.distill_temperature,
        )

    output = Path(config.output)
    output.mkdir(parents=True, exist_ok=True)
    resume = ResumePoint(output / RESUME_FILE)
    history: list[dict[str, object]] = []
    best_score = -1.0
    started = time.perf_counter()
    state = resume.load(config)
    first_epoch, skip_steps, epoch_batches = 1, 0, None
    if state is not None:
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        schedule.load_state_dict(state["schedule"])
        rng.setstate(state["rng"])
        history, best_score = state["history"], state["best_score"]
        first_epoch, skip_steps, epoch_batches = state["epoch"], state["step"], state["batches"]
        on_progress(f"resuming at epoch {first_epoch} step {skip_steps}")
    batch_size = config.batch_size
    steps_this_run, step_seconds = 0, 0.0  # the rate printed is this process's own training steps, without evaluation
    stop_at_step = min(total_steps, math.ceil(stop_after_examples / batch_size)) if stop_after_examples else total_steps

    def evaluate(epoch: int, seen_steps: int) -> None:
        nonlocal best_score
        model.eval()
        verifier = CrossEncoderVerifier(
            tokenizer, model, name=output.name, max_length=config.max_length, precision=config.precision
        )
        scores = {name: evaluate_examples(verifier, examples) for name, examples in dev.items()}
        mean_f1 = float(np.mean([float(score["macro_f1"]) for score in scores.values()]))  # type: ignore[arg-type]
        seen = min(seen_steps * batch_size, len(train) * config.epochs)
        history.append({"epoch": epoch, "examples_seen": seen, "mean_macro_f1": round(mean_f1, 4), "dev": scores})
        on_progress(f"epoch {epoch}, {seen:,} examples: mean dev macro-F1 {mean_f1:.3f} {_f1s(scores)}")
        if mean_f1 > best_score:
            best_score = mean_f1
            # fp16 on disk halves the committed size; training itself goes on in fp32.
            half = {name: tensor.detach().half() for name, tensor in model.state_dict().items()}
            model.save_pretrained(output, state_dict=half)
            tokenizer.save_pretrained(output)
        model.train()

    for epoch in range(first_epoch, config.epochs + 1):
        done_before = (epoch - 1) * steps_per_epoch
        if done_before >= stop_at_step:  # gated at an epoch's end
            break
        model.train()
        running = 0.0
        batches = epoch_batches or length_bucketed_batches(lengths, batch_size, rng)
        epoch_batches = None
        trained_steps = 0
        for step, batch in enumerate(batches, start=1):
            if step <= skip_steps:
                continue
            if done_before + step > stop_at_step:
                break
            step_started = time.perf_counter()
            encoded = tokenizer(
                [train[index].claim for index in batch],
                [train[index].passage for index in batch],
                truncation="longest_first",
                max_length=config.max_length,
                padding=True,
                return_tensors="pt",
            )
            with autocast(config.precision):
                logits = model(**encoded).logits
            loss = batch_loss(logits.float(), batch)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad()
            running += loss.item()
            steps_this_run, trained_steps = steps_this_run + 1, trained_steps + 1
            step_seconds += time.perf_counter() - step_started
            if step % 50 == 0:
                on_progress(
                    f"epoch {epoch} step {step}/{steps_per_epoch} loss {running / 50:.3f} "
                    f"({step_seconds / steps_this_run:.2f} s/step)"
                )
                running = 0.0
            at_end = step == len(batches) or done_before + step == stop_at_step
            if eval_every and step % eval_every == 0 and not at_end:
                evaluate(epoch, done_before + step)
            if step % config.resume_every == 0:
                resume.save(config, model, optimizer, schedule, rng, epoch, step, batches, history, best_score)
        skip_steps = 0
        if trained_steps:  # a run resumed exactly where it stopped has nothing new to evaluate
            evaluate(epoch, min(done_before + len(batches), stop_at_step))
        if done_before + len(batches) > stop_at_step:  # stopped inside the epoch: resume there
            resume.save(
                config, model, optimizer, schedule, rng, epoch, stop_at_step - done_before, batches, history, best_score
            )
            break
        resume.save(config, model, optimizer, schedule, rng, epoch + 1, 0, None, history, best_score)
    if stop_at_step == total_steps:
        resume.clear()
    summary = {
        "config": asdict(config),
        "train_examples": len(train),
        "train_labels": dict(Counter(e.label for e, is_gold in zip(train, gold_mask, strict=True) if is_gold)),
        "transfer_examples": int((~gold_mask).sum()),
        "history": history,
        "best_epoch": max(history, key=lambda entry: float(entry["mean_macro_f1"]))["epoch"],  # type: ignore[arg-type]
        "best_examples_seen": max(history, key=lambda entry: float(entry["mean_macro_f1"]))["examples_seen"],  # type: ignore[arg-type]
        # This process's own time: a resumed run's earlier processes are not counted.
        "training_seconds": round(time.perf_counter() - started),
        "seconds_per_step": round(step_seconds / steps_this_run, 3) if steps_this_run else None,
        **(record or {}),
    }
    (output / "training.json").write_text(json.dumps(summary, indent=2))
    return summary
