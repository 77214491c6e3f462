"""A whole verifier training run from the shared data folder, as `manage.py train_verifier` makes it: the training
splits with their extra sources and counterfactual contradictions, the dev splits, the (claim, passage) examples
the chosen input mode reads, then fine-tuning with the epoch chosen on dev."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from indexer.base import Embedder
from verifier.cross_encoder import CrossEncoderVerifier
from verifier.datasets import DEV_SPLITS, LABELS, ClaimDocumentPair, read_split, read_training_pairs
from verifier.distillation import TeacherLogits, pairs_digest, soft_targets, teacher_label_order, transfer_pairs
from verifier.extra_training import (
    benchmark_question_ids,
    bioasq_pairs,
    counterfactual_pairs,
    label_counts,
    pubmedqa_pairs,
)
from verifier.product_pairs import ShapedPair, balanced_by_label, construction_counts, shaped_pairs
from verifier.product_pools import product_pools
from verifier.reviewed_flags import ExtraFileCount, extra_report, held_out, read_reviewed_file, select_reviewed
from verifier.training import (
    Example,
    SoftTargets,
    TrainingConfig,
    build_examples,
    gold_free_examples,
    train_verifier,
)
from verifier.vectors import SentenceVectors

PRODUCT_SHAPED = "product-shaped"  # answer-like restatements of training abstracts (verifier.product_pairs)
# Any other entry of `TrainingConfig.extra_data` is an export_flags file.
EXTRA_SOURCES = ("bioasq", "pubmedqa", PRODUCT_SHAPED)
TRANSFER_SOURCES = ("bioasq-answers",)  # unlabelled pairs a distillation run has the teacher label


def extra_pairs(data_root: Path, names: Sequence[str]) -> list[ClaimDocumentPair]:
    pairs: list[ClaimDocumentPair] = []
    for name in names:
        if name == PRODUCT_SHAPED:
            continue  # built after the counterfactuals: it makes its own contradictions (product_training_pairs)
        if name == "bioasq":
            pairs += bioasq_pairs(data_root, exclude_ids=benchmark_question_ids(data_root))
        elif name == "pubmedqa":
            pairs += pubmedqa_pairs(data_root)
        else:
            raise ValueError(f"unknown extra training source {name!r} ({', '.join(EXTRA_SOURCES)})")
    return pairs


def product_training_pairs(data_root: Path, *, size: int, seed: int) -> list[ShapedPair]:
    """Product-shaped pairs from training abstracts only; `size` of them (0: all), a third of each label."""
    made = shaped_pairs(product_pools(data_root).training, seed=seed)
    return balanced_by_label(made, size, seed=seed) if size else made


def reviewed_pairs(
    data_root: Path, files: Sequence[Path], *, training: Sequence[ClaimDocumentPair]
) -> tuple[list[ClaimDocumentPair], list[ExtraFileCount]]:
    """The reviewers' labelled flags in `files` (`export_flags --output`) less dev claims, dev and benchmark
    questions and duplicates (of `training` or of one another), with how many each file gave and lost, and why."""
    if not files:
        return [], []
    read = [(path.name, read_reviewed_file(path)) for path in files]
    return select_reviewed(read, holdout=held_out(data_root), training=training)


def run_verifier_training(
    config: TrainingConfig,
    data_root: Path,
    *,
    embedder: Embedder,
    limit: int | None,
    write: Callable[[str], None],
    stop_after_examples: int = 0,
    eval_every: int = 0,
) -> dict[str, object]:
    """`limit` keeps that many training pairs of the shared splits (a quick smoke run); `embedder` picks the evidence
    sentences for the evidence input mode."""
    train_pairs = read_training_pairs(data_root, limit=limit)
    train_pairs += extra_pairs(data_root, [name for name in config.extra_data if name in EXTRA_SOURCES])
    files = [Path(name) for name in config.extra_data if name not in EXTRA_SOURCES]
    reviewed, counts = reviewed_pairs(data_root, files, training=train_pairs)
    for count in counts:
        write(count.summary())
    train_pairs += reviewed
    made = counterfactual_pairs(train_pairs, fraction=config.counterfactual_fraction, seed=config.seed)
    write(f"{len(train_pairs):,} training pairs {label_counts(train_pairs)}; {len(made):,} counterfactual")
    train_pairs += made
    if config.gold_examples and len(train_pairs) > config.gold_examples:
        # Each pair gives at least one example, so a sample of that many pairs still fills the sample of examples
        # below, and only the sampled pairs' sentences are embedded (all 17k took 22 minutes on two cores).
        train_pairs = random.Random(config.seed).sample(train_pairs, config.gold_examples)
    shaped: list[ClaimDocumentPair] = []
    if PRODUCT_SHAPED in config.extra_data:
        chosen = product_training_pairs(data_root, size=config.product_shaped_pairs, seed=config.seed)
        shaped_counts = construction_counts(chosen)
        write(f"{len(chosen):,} product-shaped pairs {shaped_counts}")
        shaped = [item.pair for item in chosen]
    dev_pairs = {split.name: read_split(data_root, split) for split in DEV_SPLITS}
    vectors = None
    if config.input_mode == "evidence":
        vectors = SentenceVectors(embedder)
        write("embedding claims and sentences for evidence selection…")
        vectors.add_pairs(train_pairs)
        for pairs in dev_pairs.values():
            vectors.add_pairs(pairs)
    if vectors is not None:
        vectors.add_pairs(shaped)
    train = build_examples(
        train_pairs,
        vectors,
        input_mode=config.input_mode,
        evidence_sentences=config.evidence_sentences,
        hard_negative_fraction=config.hard_negative_fraction,
        seed=config.seed,
    )
    if config.gold_examples and len(train) > config.gold_examples:
        train = random.Random(config.seed).sample(train, config.gold_examples)
    # The product-shaped pairs bring their own negatives (other abstracts, the claim's sentences left out).
    train += build_examples(
        shaped, vectors, input_mode=config.input_mode, evidence_sentences=config.evidence_sentences, seed=config.seed
    )
    k = config.evidence_sentences
    choose = None if vectors is None else (lambda pair: vectors.ranked(pair.claim, pair.document.sentences)[:k])
    dev = {name: gold_free_examples(pairs, choose) for name, pairs in dev_pairs.items()}
    soft = None
    record: dict[str, object] = dict(extra_report(counts))
    if shaped:
        record["product_shaped"] = shaped_counts
    if config.teacher:
        transfer = _transfer_pairs(data_root, config, write)
        if vectors is not None:
            vectors.add_pairs(transfer)
        train, soft = _distillation_targets(config, train, gold_free_examples(transfer, choose), write)
        record["teacher"] = config.teacher
    write(f"training on {len(train):,} examples; dev: " + ", ".join(f"{n} {len(e)}" for n, e in dev.items()))
    return train_verifier(
        config,
        train,
        dev,
        on_progress=write,
        stop_after_examples=stop_after_examples,
        eval_every=eval_every,
        record=record,
        soft_targets=soft,
    )


def _transfer_pairs(data_root: Path, config: TrainingConfig, write: Callable[[str], None]) -> list[ClaimDocumentPair]:
    pairs: list[ClaimDocumentPair] = []
    for name in config.transfer_data:
        if name != "bioasq-answers":
            raise ValueError(f"unknown transfer source {name!r} ({', '.join(TRANSFER_SOURCES)})")
        made, counts = transfer_pairs(data_root, seed=config.seed)
        write(counts.summary())
        pairs += made
    return pairs


def _distillation_targets(
    config: TrainingConfig, gold: Sequence[Example], transfer: Sequence[Example], write: Callable[[str], None]
) -> tuple[list[Example], SoftTargets]:
    """The gold examples and the transfer examples with the teacher's distribution over each (computed once and kept
    beside the student while it trains); a transfer example's label is the teacher's argmax, for the record only."""
    examples = [*gold, *transfer]
    pairs = [(example.claim, example.passage) for example in examples]
    # The teacher's reading is part of the key: the same pairs read at another length or precision are other labels.
    digest = pairs_digest(pairs, f"{config.teacher}|{config.max_length}|{config.precision}")
    stored = TeacherLogits(Path(config.output))
    logits = stored.load(digest)
    if logits is None:
        write(f"the teacher labels {len(pairs):,} pairs ({config.teacher}, {config.precision})…")
        teacher = CrossEncoderVerifier.load(config.teacher, max_length=config.max_length, precision=config.precision)
        logits = teacher.logits(pairs)[:, teacher_label_order(teacher.labels)].astype(np.float32)
        stored.save(digest, logits)
    probabilities = soft_targets(logits, config.distill_temperature)
    argmax = np.argmax(logits[len(gold) :], axis=1)
    labelled = [Example(e.claim, e.passage, LABELS[int(i)]) for e, i in zip(transfer, argmax, strict=True)]
    gold_mask = np.array([True] * len(gold) + [False] * len(transfer))
    return [*gold, *labelled], SoftTargets(probabilities=probabilities, gold=gold_mask)
