"""Building verifier training examples, and a short real fine-tuning run of the packaged MiniLM backbone."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
import torch

from indexer.training_resume import RESUME_FILE, ResumePoint, length_bucketed_batches
from verifier.cross_encoder import CrossEncoderVerifier
from verifier.datasets import ClaimDocumentPair, Document
from verifier.training import (
    Example,
    TrainingConfig,
    build_examples,
    evidence_choice,
    train_verifier,
)

# Loads a real model (see MARKER_BY_FIXTURE in tests/conftest.py for the automatic cases).
pytestmark = pytest.mark.model

DOCUMENT = Document("d1", "Metformin trial", ("Intro.", "HbA1c fell.", "No acidosis.", "Funding.", "Limits."))


def pair(label: str, rationale: tuple[int, ...]) -> ClaimDocumentPair:
    return ClaimDocumentPair("1", "Metformin lowers HbA1c.", DOCUMENT, label, rationale)


def test_the_rationale_is_kept_and_topped_up_with_the_best_ranked_sentences() -> None:
    assert evidence_choice(pair("SUPPORT", (1,)), ranked=[4, 1, 0, 2, 3], k=3) == [1, 4, 0]
    assert evidence_choice(pair("NO_EVIDENCE", ()), ranked=[4, 1, 0], k=2) == [4, 1]
    assert evidence_choice(pair("SUPPORT", (0, 1, 2, 3)), ranked=[4], k=2) == [0, 1]


def test_whole_abstract_examples_and_hard_negatives() -> None:
    [example] = build_examples([pair("SUPPORT", (1,))], None, input_mode="abstract")
    assert example.passage == "Metformin trial Intro. HbA1c fell. No acidosis. Funding. Limits."


def test_length_buckets_cover_every_example_once() -> None:
    lengths = [random.Random(1).randint(10, 500) for _ in range(101)]
    batches = length_bucketed_batches(lengths, 8, random.Random(2))
    assert sorted(index for batch in batches for index in batch) == list(range(101))
    assert all(len(batch) <= 8 for batch in batches)


def test_a_short_real_run_saves_an_fp16_checkpoint_that_loads(tmp_path: Path) -> None:
    from indexer.packaged_models import MINILM, resolve_model_path

    texts = [
        ("Drug A lowers blood pressure.", "Trial. Drug A lowered blood pressure by 10 mmHg.", "SUPPORT"),
        ("Drug A lowers blood pressure.", "Trial. Drug A did not change blood pressure.", "CONTRADICT"),
        ("Drug A lowers blood pressure.", "Survey. Patients preferred morning clinics.", "NO_EVIDENCE"),
    ]
    train = [Example(claim, passage, label) for claim, passage, label in texts * 6]
    dev = {"toy": [Example(claim, passage, label) for claim, passage, label in texts]}
    output = tmp_path / "verifier"
    config = TrainingConfig(backbone=resolve_model_path(MINILM), output=str(output), epochs=2, max_length=48)

    summary = train_verifier(config, train, dev, on_progress=lambda message: None)

    assert [entry["epoch"] for entry in summary["history"]] == [1, 2]  # type: ignore[index, union-attr]
    saved = json.loads((output / "training.json").read_text())
    assert saved["train_examples"] == 18
    assert saved["config"]["max_length"] == 48
    loaded = CrossEncoderVerifier.load(output)
    assert loaded.labels == ("SUPPORT", "CONTRADICT", "NO_EVIDENCE")
    assert len(loaded.classify([(texts[0][0], texts[0][1])])) == 1


def test_a_killed_run_resumes_where_it_stopped_and_ends_like_an_uninterrupted_one(tmp_path: Path) -> None:
    from indexer.packaged_models import MINILM, resolve_model_path

    texts = [
        ("Drug A lowers blood pressure.", "Trial. Drug A lowered blood pressure by 10 mmHg.", "SUPPORT"),
        ("Drug A lowers blood pressure.", "Trial. Drug A did not change blood pressure.", "CONTRADICT"),
        ("Drug A lowers blood pressure.", "Survey. Patients preferred morning clinics.", "NO_EVIDENCE"),
    ]
    train = [Example(claim, passage, label) for claim, passage, label in texts * 4]
    dev = {"toy": [Example(claim, passage, label) for claim, passage, label in texts]}

    def config(folder: str) -> TrainingConfig:
        return TrainingConfig(
            backbone=resolve_model_path(MINILM),
            output=str(tmp_path / folder),
            epochs=2,
            batch_size=4,
            max_length=32,
            resume_every=1,
        )

    class KilledError(Exception):
        pass

    progress: list[str] = []

    def kill_after_four_steps(message: str) -> None:
        progress.append(message)

    steps: list[int] = []
    original = ResumePoint.save

    def save_then_maybe_die(self: ResumePoint, *args: object, **kwargs: object) -> None:
        original(self, *args, **kwargs)  # type: ignore[arg-type]
        steps.append(1)
        if len(steps) == 5:  # 3 steps and the end of epoch 1, then the first step of epoch 2: die there
            raise KilledError

    ResumePoint.save = save_then_maybe_die  # type: ignore[method-assign]
    try:
        with pytest.raises(KilledError):
            train_verifier(config("resumed"), train, dev, on_progress=kill_after_four_steps)
    finally:
        ResumePoint.save = original  # type: ignore[method-assign]
    assert (tmp_path / "resumed" / RESUME_FILE).exists()

    resumed = train_verifier(config("resumed"), train, dev, on_progress=progress.append)
    train_verifier(config("straight"), train, dev, on_progress=lambda message: None)

    assert any("resuming at epoch 2 step 1" in message for message in progress)
    assert not (tmp_path / "resumed" / RESUME_FILE).exists()  # cleared once the run ends
    assert [entry["epoch"] for entry in resumed["history"]] == [1, 2]  # type: ignore[index, union-attr]
    a = CrossEncoderVerifier.load(tmp_path / "resumed").logits([(texts[0][0], texts[0][1])])
    b = CrossEncoderVerifier.load(tmp_path / "straight").logits([(texts[0][0], texts[0][1])])
    assert a == pytest.approx(b, abs=2e-2)  # same steps in the same order (fp16 on disk)


def toy_examples(repeat: int) -> tuple[list[Example], dict[str, list[Example]]]:
    texts = [
        ("Drug A lowers blood pressure.", "Trial. Drug A lowered blood pressure by 10 mmHg.", "SUPPORT"),
        ("Drug A lowers blood pressure.", "Trial. Drug A did not change blood pressure.", "CONTRADICT"),
        ("Drug A lowers blood pressure.", "Survey. Patients preferred morning clinics.", "NO_EVIDENCE"),
    ]
    train = [Example(claim, passage, label) for claim, passage, label in texts * repeat]
    return train, {"toy": [Example(claim, passage, label) for claim, passage, label in texts]}


def test_an_early_gate_stops_with_its_curve_and_the_same_run_goes_on_to_the_end(tmp_path: Path) -> None:
    from indexer.packaged_models import MINILM, resolve_model_path

    train, dev = toy_examples(8)  # 24 examples, 6 steps of 4 an epoch, 12 in all

    def config(folder: str) -> TrainingConfig:
        return TrainingConfig(
            backbone=resolve_model_path(MINILM), output=str(tmp_path / folder), epochs=2, batch_size=4, max_length=32
        )

    gated = train_verifier(
        config("gated"), train, dev, on_progress=lambda m: None, stop_after_examples=28, eval_every=2
    )

    # Evaluated every 2 steps and where the gate stopped (step 7, inside epoch 2), then kept for resuming.
    assert [entry["examples_seen"] for entry in gated["history"]] == [8, 16, 24, 28]  # type: ignore[index, union-attr]
    assert [entry["epoch"] for entry in gated["history"]] == [1, 1, 1, 2]  # type: ignore[index, union-attr]
    assert (tmp_path / "gated" / RESUME_FILE).exists()

    progress: list[str] = []
    finished = train_verifier(config("gated"), train, dev, on_progress=progress.append)

    # The same run, not a new one: it picks up after step 7 and its curve ends at the whole run's 48 examples.
    assert any("resuming at epoch 2 step 1" in message for message in progress)
    assert not (tmp_path / "gated" / RESUME_FILE).exists()
    curve = [entry["examples_seen"] for entry in finished["history"]]  # type: ignore[index, union-attr]
    assert curve == [8, 16, 24, 28, 48]
    assert json.loads((tmp_path / "gated" / "training.json").read_text())["config"]["epochs"] == 2


def test_bf16_autocast_trains_a_checkpoint_that_loads_and_an_unknown_precision_is_refused(tmp_path: Path) -> None:
    from indexer.packaged_models import MINILM, resolve_model_path
    from verifier.precision import autocast

    train, dev = toy_examples(4)
    config = TrainingConfig(
        backbone=resolve_model_path(MINILM), output=str(tmp_path / "bf16"), epochs=1, batch_size=4, precision="bf16"
    )

    summary = train_verifier(config, train, dev, on_progress=lambda message: None)

    assert summary["config"]["precision"] == "bf16"  # type: ignore[index]
    loaded = CrossEncoderVerifier.load(tmp_path / "bf16")
    assert loaded.model.dtype == torch.float32  # weights stay fp32; only the forward pass ran in bf16
    assert np.isfinite(loaded.logits([(train[0].claim, train[0].passage)])).all()
    with pytest.raises(ValueError, match="unknown precision 'fp8'"):
        autocast("fp8")
