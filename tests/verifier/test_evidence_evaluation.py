"""Evidence extraction evaluation on a slice of SciFact dev, with the committed tagger."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.embedder import SentenceTransformerEmbedder
from tests.support import REPO
from verifier.datasets import ClaimDocumentPair, Document
from verifier.evidence_evaluation import evaluate_evidence, tagger_pick

MODELS = REPO / "verifier" / "models"


@pytest.mark.model
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
    assert {"closest_sentence_cosine", "bm25_top1", "late_fusion_threshold_only"} <= set(report["baselines"])
    # Marking the best sentence where none reaches the threshold can only add marks.
    assert report["recall"] >= report["baselines"]["late_fusion_threshold_only"]["recall"]


class _FixedScores:
    """Stands in for a trained tagger: these scores for any pair, and its threshold."""

    def __init__(self, scores: list[float], threshold: float) -> None:
        self.scores, self.threshold = scores, threshold

    def probabilities(self, features: object) -> list[float]:
        return self.scores


def _pair(sentences: int) -> ClaimDocumentPair:
    document = Document(doc_id="d", title="t", sentences=tuple(f"s{i}." for i in range(sentences)))
    return ClaimDocumentPair(claim_id="c", claim="c", document=document, label="SUPPORT", rationale=(1,))


@pytest.mark.parametrize(
    ("scores", "at_least_one", "marked"),
    [
        ([0.2, 0.4, 0.1], True, [0, 1, 0]),  # none reaches 0.55: the best is shown, as the page does
        ([0.2, 0.4, 0.1], False, [0, 0, 0]),
        ([0.6, 0.9, 0.1], True, [1, 1, 0]),  # some reach it: exactly those
        ([0.6, 0.9, 0.1], False, [1, 1, 0]),
    ],
)
def test_the_tagger_marks_what_reaches_its_threshold_or_else_its_best_sentence(
    scores: list[float], at_least_one: bool, marked: list[int]
) -> None:
    pick = tagger_pick(_FixedScores(scores, 0.55), lambda pair: None, at_least_one=at_least_one)  # type: ignore[arg-type]

    assert pick(_pair(3)) == (scores, marked)
