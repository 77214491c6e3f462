"""Verification evaluation end to end on a slice of SciFact dev, with the committed models."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator.base import LLMSettings
from indexer.embedder import SentenceTransformerEmbedder
from tests.support import REPO
from verifier.datasets import DEV_SPLITS, DataFormat, read_split
from verifier.evaluation import balanced_sample, evaluate_verification

# Loads a real model (see MARKER_BY_FIXTURE in tests/conftest.py for the automatic cases).
pytestmark = pytest.mark.model

MODELS = REPO / "verifier" / "models"
VERIFIER = MODELS / "verimed-minilm-verifier"


@pytest.fixture
def claims(tmp_path: Path, data_dir: Path) -> Path:
    lines = (data_dir / "scifact" / "claims_dev.jsonl").read_text().splitlines()[:24]
    path = tmp_path / "claims.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def evaluate(
    claims: Path,
    *,
    corpus: Path | None,
    embedder: SentenceTransformerEmbedder,
    data_root: Path,
    data_format: DataFormat = "scifact",
    peers: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The run `manage.py evaluate verification --judge-pairs 0` makes with the committed models."""
    return evaluate_verification(
        claims,
        corpus=corpus,
        data_format=data_format,
        model=str(VERIFIER),
        labels=None,
        peer_folders=peers,
        embedder=embedder,
        evidence_model=MODELS / "verimed-evidence-late-fusion",
        evidence_sentences=3,
        data_root=data_root,
        judge_pairs=0,
        judge_endpoint=LLMSettings(base_url="http://127.0.0.1:9/v1", model="no-judge"),
        serve_judge=None,
        model_cache=data_root,
        write=lambda line: None,
    )


def test_verification_report_has_the_documented_shape(
    claims: Path, data_dir: Path, minilm: SentenceTransformerEmbedder
) -> None:
    report = evaluate(claims, corpus=data_dir / "scifact" / "corpus.jsonl.gz", embedder=minilm, data_root=data_dir)

    assert report["n"] > 20
    assert 0 <= report["macro_f1"] <= 1
    assert 0 <= report["accuracy"] <= 1
    assert set(report["per_label"]) == {"SUPPORT", "CONTRADICT", "NO_EVIDENCE"}
    assert set(report["per_label"]["SUPPORT"]) >= {"precision", "recall", "f1"}
    assert report["pairs_per_s"] > 0
    assert set(report["baselines"]) == {"same_model_whole_abstract", "majority_class"}
    assert report["baselines"]["majority_class"]["label"] == "SUPPORT"
    assert 0 <= report["ece"] <= 1
    assert set(report["shown"]) == {"threshold", "coverage", "precision"}
    assert 0 < report["shown"]["coverage"] <= 1
    unseen = report["unseen_documents"]
    assert set(unseen) >= {"n", "macro_f1", "per_label", "ece", "shown"}
    assert 0 < unseen["n"] <= report["n"]


def test_a_peer_checkpoint_is_measured_in_the_same_run_on_the_same_pairs(
    claims: Path, data_dir: Path, minilm: SentenceTransformerEmbedder
) -> None:
    report = evaluate(
        claims,
        corpus=data_dir / "scifact" / "corpus.jsonl.gz",
        embedder=minilm,
        data_root=data_dir,
        peers=(str(VERIFIER),),
    )

    peer = report["baselines"][f"peer_{VERIFIER.name}"]
    assert peer["n"] == report["n"]
    assert peer["input"] == "evidence sentences"
    # The same checkpoint and rule on the same inputs: the same figures.
    assert peer["macro_f1"] == report["macro_f1"]
    assert peer["shown"] == report["shown"]


def test_the_judge_sample_is_label_balanced_and_seeded(data_dir: Path) -> None:
    pairs = read_split(data_dir, DEV_SPLITS[0])
    sample = balanced_sample(pairs, 60)
    assert sample == balanced_sample(pairs, 60)
    labels = [pairs[index].label for index in sample]
    assert {label: labels.count(label) for label in set(labels)} == {"SUPPORT": 20, "CONTRADICT": 20, "NO_EVIDENCE": 20}
