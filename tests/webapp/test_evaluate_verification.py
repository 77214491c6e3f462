"""`manage.py evaluate verification|evidence` end to end on a slice of SciFact dev, with the committed models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError

from verifier.datasets import DEV_SPLITS, read_split
from webapp.ops.evaluate_verification import balanced_sample

SCIFACT = settings.VERIMED_DATA_DIR / "scifact"


@pytest.fixture
def claims(tmp_path: Path) -> Path:
    lines = (SCIFACT / "claims_dev.jsonl").read_text().splitlines()[:24]
    path = tmp_path / "claims.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_verification_report_has_the_documented_shape(claims: Path, tmp_path: Path) -> None:
    out = tmp_path / "verification.json"
    call_command(
        "evaluate", "verification", "--claims", str(claims), "--corpus", str(SCIFACT / "corpus.jsonl.gz"),
        "--judge-pairs", "0", "--json", str(out),
    )  # fmt: skip
    report = json.loads(out.read_text())
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


def test_a_peer_checkpoint_is_measured_in_the_same_run_on_the_same_pairs(claims: Path, tmp_path: Path) -> None:
    out = tmp_path / "verification.json"
    call_command(
        "evaluate", "verification", "--claims", str(claims), "--corpus", str(SCIFACT / "corpus.jsonl.gz"),
        "--judge-pairs", "0", "--peer", str(settings.VERIMED_VERIFIER_MODEL), "--json", str(out),
    )  # fmt: skip
    report = json.loads(out.read_text())
    peer = report["baselines"][f"peer_{settings.VERIMED_VERIFIER_MODEL.name}"]
    assert peer["n"] == report["n"]
    assert peer["input"] == "evidence sentences"
    # The same checkpoint and rule on the same inputs: the same figures.
    assert peer["macro_f1"] == report["macro_f1"]
    assert peer["shown"] == report["shown"]


def test_the_raw_healthver_csv_is_read(tmp_path: Path) -> None:
    rows = (settings.VERIMED_DATA_DIR / "healthver" / "healthver_dev.csv").read_text().splitlines()
    csv_path = tmp_path / "healthver.csv"
    csv_path.write_text("\n".join(rows[:13]) + "\n")
    out = tmp_path / "hv.json"
    call_command(
        "evaluate", "verification", "--claims", str(csv_path), "--format", "healthver-csv",
        "--judge-pairs", "0", "--json", str(out),
    )  # fmt: skip
    assert json.loads(out.read_text())["n"] == 12


def test_evidence_report_has_the_documented_shape(claims: Path, tmp_path: Path) -> None:
    out = tmp_path / "evidence.json"
    call_command(
        "evaluate", "evidence", "--claims", str(claims), "--corpus", str(SCIFACT / "corpus.jsonl.gz"),
        "--json", str(out),
    )  # fmt: skip
    report = json.loads(out.read_text())
    assert report["model"] == "late_fusion"
    assert report["n"] > 5
    for run in [report, *report["baselines"].values()]:
        assert set(run) >= {"n", "precision", "recall", "f1", "top1_hit", "claims_per_s", "unseen_documents"}
        assert 0 <= run["top1_is_first_sentence"] <= 1
    assert {"closest_sentence_cosine", "bm25_top1"} <= set(report["baselines"])


def test_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="does not exist"):
        call_command("evaluate", "verification", "--claims", str(tmp_path / "nope.jsonl"), "--judge-pairs", "0")


def test_the_judge_sample_is_label_balanced_and_seeded() -> None:
    pairs = read_split(settings.VERIMED_DATA_DIR, DEV_SPLITS[0])
    sample = balanced_sample(pairs, 60)
    assert sample == balanced_sample(pairs, 60)
    labels = [pairs[index].label for index in sample]
    assert {label: labels.count(label) for label in set(labels)} == {"SUPPORT": 20, "CONTRADICT": 20, "NO_EVIDENCE": 20}
