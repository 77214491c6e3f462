"""Evidence extraction evaluation on a slice of SciFact dev, with the committed tagger."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.embedder import SentenceTransformerEmbedder
from tests.support import REPO
from verifier.evidence_evaluation import evaluate_evidence

# Loads a real model (see MARKER_BY_FIXTURE in tests/conftest.py for the automatic cases).
pytestmark = pytest.mark.model

MODELS = REPO / "verifier" / "models"


def test_evidence_report_has_the_documented_shape(
    tmp_path: Path, data_dir: Path, minilm: SentenceTransformerEmbedder
) -> None:
    claims = tmp_path / "claims.jsonl"
    claims.write_text("\n".join((data_dir / "scifact" / "claims_dev.jsonl").read_text().splitlines()[:24]) + "\n")

    report = evaluate_evidence(
        claims,
        corpus=data_dir / "scifact" / "corpus.jsonl.gz",
        embedder=minilm,
        late_fusion=MODELS / "verimed-evidence-late-fusion",
        early_fusion=tmp_path / "no-early-fusion",
        verifier_model=MODELS / "verimed-minilm-verifier",
        data_root=data_dir,
        write=lambda line: None,
    )

    assert report["model"] == "late_fusion"
    assert report["n"] > 5
    for run in [report, *report["baselines"].values()]:
        assert set(run) >= {"n", "precision", "recall", "f1", "top1_hit", "claims_per_s", "unseen_documents"}
        assert 0 <= run["top1_is_first_sentence"] <= 1
    assert {"closest_sentence_cosine", "bm25_top1"} <= set(report["baselines"])
