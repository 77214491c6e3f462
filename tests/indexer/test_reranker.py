"""The reranker's contract, on the committed checkpoint (torch and onnx-int8), and its training loop on the real
MiniLM backbone (resumable, and saving a folder the reranker loads)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from indexer.packaged_models import resolve_model_path
from indexer.reranker import DEFAULT_RERANKER, CrossEncoderReranker, RerankerLoadError
from indexer.reranker_data import TrainingGroup
from indexer.reranker_training import RerankerTrainingConfig, train_reranker
from indexer.training_resume import RESUME_FILE, ResumePoint

pytestmark = pytest.mark.model

QUESTION = "Which gene is mutated in cystic fibrosis?"
RELEVANT = "Cystic fibrosis is caused by mutations in the CFTR gene, which encodes a chloride channel."
UNRELATED = (
    "Annual influenza vaccination reduced hospital admissions for pneumonia in people over 65.",
    "Statin therapy lowered LDL cholesterol and major vascular events in a large trial.",
    "The patients were recruited from three hospitals between 2010 and 2014.",
)


@pytest.fixture(scope="module", params=["torch", "onnx-int8"])
def reranker(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> CrossEncoderReranker:
    model = CrossEncoderReranker(backend=request.param, cache_dir=tmp_path_factory.mktemp("reranker-cache"))
    model.warm_up()
    return model


def test_the_relevant_passage_scores_highest(reranker: CrossEncoderReranker) -> None:
    scores = reranker.score(QUESTION, [*UNRELATED, RELEVANT])

    assert scores.shape == (4,)
    assert int(np.argmax(scores)) == 3


def test_scores_come_back_in_the_callers_order_whatever_the_batching(reranker: CrossEncoderReranker) -> None:
    passages = [RELEVANT, *UNRELATED, RELEVANT + " It was found in 1989."]

    together = reranker.score(QUESTION, passages)
    alone = np.array([reranker.score(QUESTION, [passage])[0] for passage in passages])

    # int8 activations are quantized with a scale per batch, so batch-mates move a score a little; torch's do not.
    tolerance = 1e-3 if reranker.backend == "torch" else 0.3
    assert together == pytest.approx(alone, abs=tolerance)
    assert int(np.argmax(together)) == int(np.argmax(alone))
    assert reranker.score(QUESTION, []).shape == (0,)


def test_onnx_int8_ranks_as_torch_does(tmp_path: Path) -> None:
    passages = [*UNRELATED, RELEVANT, "CFTR mutations such as F508del impair chloride transport."]
    torch_scores = CrossEncoderReranker(backend="torch").score(QUESTION, passages)
    int8_scores = CrossEncoderReranker(backend="onnx-int8", cache_dir=tmp_path).score(QUESTION, passages)

    assert list(np.argsort(-torch_scores)) == list(np.argsort(-int8_scores))
    assert int8_scores == pytest.approx(torch_scores, abs=0.5)


def test_a_folder_that_is_not_a_reranker_is_refused(tmp_path: Path) -> None:
    verifier = Path(__file__).resolve().parents[2] / "verifier" / "models" / "verimed-minilm-verifier"

    with pytest.raises(RerankerLoadError, match="not a reranker checkpoint"):
        CrossEncoderReranker(verifier).warm_up()
    with pytest.raises(RerankerLoadError, match=r"config\.json is missing"):
        CrossEncoderReranker(tmp_path / "nothing").warm_up()


def test_the_onnx_backend_needs_a_cache_folder() -> None:
    with pytest.raises(ValueError, match="needs cache_dir"):
        CrossEncoderReranker(DEFAULT_RERANKER, backend="onnx-int8")


GROUPS = [
    TrainingGroup(
        f"q{n}",
        f"Which gene causes disease number {n}?",
        f"Gene G{n} causes disease {n}.",
        (f"Disease {n + 1} is common in winter.", "The trial enrolled 40 adults."),
    )
    for n in range(12)
]


def test_training_resumes_where_it_was_killed_and_saves_a_loadable_reranker(tmp_path: Path) -> None:
    def config(name: str) -> RerankerTrainingConfig:
        return RerankerTrainingConfig(
            backbone=resolve_model_path("minilm"),
            output=str(tmp_path / name),
            epochs=2,
            groups_per_batch=4,
            resume_every=1,
            max_length=48,
        )

    class KilledError(Exception):
        pass

    saves: list[int] = []
    original = ResumePoint.save

    def save_then_maybe_die(self: ResumePoint, *args: object, **kwargs: object) -> None:
        original(self, *args, **kwargs)  # type: ignore[arg-type]
        saves.append(1)
        if len(saves) == 5:  # 3 steps and the end of epoch 1, then the first step of epoch 2: die there
            raise KilledError

    ResumePoint.save = save_then_maybe_die  # type: ignore[method-assign]
    try:
        with pytest.raises(KilledError):
            train_reranker(config("resumed"), GROUPS, on_progress=lambda message: None)
    finally:
        ResumePoint.save = original  # type: ignore[method-assign]
    assert (tmp_path / "resumed" / RESUME_FILE).exists()

    progress: list[str] = []
    summary = train_reranker(config("resumed"), GROUPS, on_progress=progress.append)
    train_reranker(config("straight"), GROUPS, on_progress=lambda message: None)

    assert any("resuming at epoch 2 step 1" in message for message in progress)
    assert not (tmp_path / "resumed" / RESUME_FILE).exists()
    assert summary["train_groups"] == 12
    resumed = CrossEncoderReranker(tmp_path / "resumed").score(QUESTION, [RELEVANT, UNRELATED[0]])
    straight = CrossEncoderReranker(tmp_path / "straight").score(QUESTION, [RELEVANT, UNRELATED[0]])
    assert resumed == pytest.approx(straight, abs=2e-2)  # the same steps in the same order (fp16 on disk)


def test_groups_with_different_numbers_of_negatives_are_refused(tmp_path: Path) -> None:
    uneven = [GROUPS[0], TrainingGroup("x", "q?", "p.", ("n.",))]
    config = RerankerTrainingConfig(backbone=resolve_model_path("minilm"), output=str(tmp_path / "m"))

    with pytest.raises(ValueError, match="same number of negatives"):
        train_reranker(config, uneven)
