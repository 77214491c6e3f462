"""Distilling the large verifier into a small one: which transfer pairs may be made (never from a dev or benchmark
question, never a dev claim), the loss, the teacher's stored labels, and a short real run where the student learns
the teacher's labels rather than the gold ones."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from django.conf import settings

from indexer.reranker_data import training_questions
from verifier.datasets import LABELS
from verifier.distillation import TeacherLogits, pairs_digest, soft_targets, teacher_label_order, transfer_pairs
from verifier.reviewed_flags import held_out, normalised
from verifier.training import Example, SoftTargets, TrainingConfig, distillation_loss

DATA = settings.VERIMED.paths.data_dir
DEV_CLAIM = "Vitamin D supplements prevent severe COVID-19 in older adults."
URL = "http://www.ncbi.nlm.nih.gov/pubmed/"


def _question(qid: str, body: str, pmid: str, ideal: str, snippets: list[str]) -> dict[str, object]:
    return {
        "id": qid,
        "body": body,
        "type": "summary",
        "documents": [URL + pmid],
        "ideal_answer": [ideal, "A second ideal answer that restates the first one."],
        "snippets": [{"text": text, "document": URL + pmid} for text in snippets],
    }


def _lines(path: Path, rows: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


@pytest.fixture
def data_root(tmp_path: Path) -> Path:
    for split in ("scifact", "healthver", "citation_integrity"):
        _lines(tmp_path / split / "claims_dev.jsonl", [{"id": 1, "claim": DEV_CLAIM if split == "healthver" else "x"}])
    with (tmp_path / "healthver" / "healthver_dev.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["id", "evidence", "claim", "label", "question"])
        writer.writeheader()
        writer.writerow({"id": 1, "evidence": "e", "claim": "c", "label": "Supports", "question": "Does zinc help?"})
    (tmp_path / "pubmedqa").mkdir()
    (tmp_path / "pubmedqa" / "ori_pqal.json").write_text(json.dumps({"9": {"QUESTION": "Is aspirin safe?"}}))
    (tmp_path / "pubmedqa" / "test_ground_truth.json").write_text(json.dumps({"9": "yes"}))
    _lines(tmp_path / "bioasq/benchmark/questions_dev.jsonl", [{"id": "dev1", "body": "Is papilin secreted?"}])
    with gzip.open(tmp_path / "bioasq/benchmark/corpus.jsonl.gz", "wt") as corpus:
        corpus.write(json.dumps({"pmid": "301", "text": "Drug X. Drug X lowers urate."}) + "\n")
    questions = [
        _question(
            "keep1",
            "Which gene causes cystic fibrosis?",
            "100",
            f"CFTR mutations cause cystic fibrosis in most patients. Yes. {DEV_CLAIM}",
            ["CFTR mutations cause cystic fibrosis.", "Cystic fibrosis is recessive."],
        ),
        _question(
            "keep2",
            "Which receptor does insulin bind to?",
            "500",
            "Insulin binds the insulin receptor on the cell surface.",
            ["Insulin binds the insulin receptor."],
        ),
        _question("dev1", "Is papilin secreted?", "200", "Papilin is a secreted extracellular matrix protein.", ["P."]),
        _question("bench", "What does drug X treat?", "301", "Drug X treats gout by lowering urate levels.", ["D."]),
        _question("hv", "Does zinc help?", "600", "Zinc may shorten the common cold in adults.", ["Zinc."]),
        _question("pqa", "Is aspirin safe?", "700", "Aspirin raises the risk of bleeding in older adults.", ["A."]),
    ]
    _lines(tmp_path / "bioasq/golden/9B1_golden.jsonl", [])  # not a golden file: ignored
    (tmp_path / "bioasq/golden/9B1_golden.json").write_text(json.dumps({"questions": questions}))
    return tmp_path


def test_transfer_pairs_come_only_from_questions_that_are_neither_dev_nor_benchmark(data_root: Path) -> None:
    pairs, counts = transfer_pairs(data_root)

    assert {pair.claim_id.split(":")[1] for pair in pairs} == {"keep1", "keep2"}
    assert counts.questions_read == 6
    assert counts.questions_held_out == 4  # dev id, benchmark abstract, HealthVer dev and PubMedQA test questions
    assert all("papilin" not in pair.claim.lower() and "gout" not in pair.claim for pair in pairs)


def test_answer_sentences_are_paired_with_their_own_and_another_questions_snippets(data_root: Path) -> None:
    pairs, _ = transfer_pairs(data_root)
    claims = {pair.claim for pair in pairs}

    assert DEV_CLAIM not in claims  # a dev claim, even inside an answer, is not a transfer claim
    assert "Yes." not in claims  # too short to judge
    assert "A second ideal answer that restates the first one." not in claims
    own = [pair for pair in pairs if pair.claim_id == "bioasq:keep1:0"]
    other = [pair for pair in pairs if pair.claim_id == "bioasq:keep1:0:other"]
    assert own[0].claim == "CFTR mutations cause cystic fibrosis in most patients."
    assert own[0].document.sentences == ("CFTR mutations cause cystic fibrosis.", "Cystic fibrosis is recessive.")
    assert other[0].document.doc_id == "bioasq:keep2"
    assert all(pair.rationale == () for pair in pairs)


def test_on_the_real_data_no_dev_claim_or_held_out_question_reaches_the_transfer_set() -> None:
    pairs, counts = transfer_pairs(DATA)
    holdout = held_out(DATA)
    allowed = {question.id for question in training_questions(DATA)}

    assert counts.pairs == len(pairs) > 5000
    assert {pair.claim_id.split(":")[1] for pair in pairs} <= allowed
    assert not {normalised(pair.claim) for pair in pairs} & holdout.claims
    with (DATA / "bioasq/benchmark/questions_dev.jsonl").open() as handle:
        dev_ids = {str(json.loads(line)["id"]) for line in handle if line.strip()}
    assert not {pair.claim_id.split(":")[1] for pair in pairs} & dev_ids


def test_the_loss_is_the_gold_cross_entropy_at_alpha_one_and_the_scaled_kl_without_gold() -> None:
    logits = torch.tensor([[2.0, 0.0, -1.0], [0.5, 0.2, 0.1]])
    labels = torch.tensor([0, 2])
    teacher = torch.tensor([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]])
    weights = torch.ones(3)

    hard = distillation_loss(
        logits, labels, teacher, torch.tensor([True, True]), class_weights=weights, alpha=1.0, temperature=2.0
    )
    soft = distillation_loss(
        logits, labels, teacher, torch.tensor([False, False]), class_weights=weights, alpha=1.0, temperature=2.0
    )

    assert float(hard) == pytest.approx(float(torch.nn.functional.cross_entropy(logits, labels)))
    log_student = torch.log_softmax(logits / 2.0, dim=-1)
    kl = (teacher * (teacher.log() - log_student)).sum(dim=-1).mean() * 4.0
    assert float(soft) == pytest.approx(float(kl))
    matched = distillation_loss(
        torch.log(teacher) * 2.0,
        labels,
        teacher,
        torch.tensor([False, False]),
        class_weights=weights,
        alpha=0.5,
        temperature=2.0,
    )
    assert float(matched) == pytest.approx(0.0, abs=1e-6)  # a student that already says what the teacher says


def test_soft_targets_soften_with_temperature_and_columns_follow_the_students_label_order() -> None:
    logits = np.array([[4.0, 0.0, 0.0]])

    assert soft_targets(logits, 1.0)[0, 0] > soft_targets(logits, 4.0)[0, 0] > 1 / 3
    assert soft_targets(logits, 2.0).sum() == pytest.approx(1.0)
    assert teacher_label_order(("NO_EVIDENCE", "SUPPORT", "CONTRADICT")) == [1, 2, 0]
    with pytest.raises(ValueError, match="not"):
        teacher_label_order(("ENTAILMENT", "NEUTRAL", "CONTRADICTION"))


def test_stored_teacher_labels_are_reused_only_for_the_same_pairs_and_teacher(tmp_path: Path) -> None:
    stored = TeacherLogits(tmp_path)
    digest = pairs_digest([("claim", "passage")], "teacher-a")
    stored.save(digest, np.array([[1.0, 2.0, 3.0]]))

    assert stored.load(digest) == pytest.approx(np.array([[1.0, 2.0, 3.0]]))
    assert stored.load(pairs_digest([("claim", "passage")], "teacher-b")) is None
    assert stored.load(pairs_digest([("claim", "other passage")], "teacher-a")) is None


@pytest.mark.model
def test_a_distilled_student_learns_the_teachers_labels_not_only_the_gold_ones(tmp_path: Path) -> None:
    from indexer.packaged_models import MINILM, resolve_model_path
    from verifier.cross_encoder import CrossEncoderVerifier
    from verifier.training import train_verifier

    texts = [
        ("Drug A lowers blood pressure.", "Trial. Drug A lowered blood pressure by 10 mmHg."),
        ("Drug A lowers blood pressure.", "Trial. Drug A did not change blood pressure."),
        ("Drug A lowers blood pressure.", "Survey. Patients preferred morning clinics."),
    ]
    gold = [Example(claim, passage, "NO_EVIDENCE") for claim, passage in texts]  # the gold says one thing
    teacher = np.full((3, 3), 0.02, dtype=np.float32)
    for row, label in enumerate(LABELS):  # the teacher another: each passage's own label
        teacher[row, LABELS.index(label)] = 0.96
    train = gold * 8
    targets = SoftTargets(probabilities=np.tile(teacher, (8, 1)), gold=np.zeros(len(train), dtype=bool))
    config = TrainingConfig(
        backbone=resolve_model_path(MINILM),
        output=str(tmp_path / "student"),
        epochs=6,
        batch_size=6,
        max_length=32,
        learning_rate=2e-4,
        warmup_ratio=0.0,
        distill_alpha=0.5,
    )

    # Dev reads the teacher's labels, so the epoch kept is the one that learnt them best.
    dev = {"toy": [Example(claim, passage, label) for (claim, passage), label in zip(texts, LABELS, strict=True)]}
    summary = train_verifier(config, train, dev, on_progress=lambda message: None, soft_targets=targets)

    student = CrossEncoderVerifier.load(tmp_path / "student")
    predicted = [student.labels[int(np.argmax(row))] for row in student.logits(texts)]
    assert predicted == list(LABELS)  # the teacher's labels: no gold example counted
    assert summary["transfer_examples"] == len(train)


@pytest.mark.model
def test_the_teacher_reads_the_pairs_once_per_reading_and_transfer_examples_carry_no_gold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from verifier import training_run
    from verifier.cross_encoder import CrossEncoderVerifier

    teacher = str(Path(settings.VERIMED.verification.verifier_model))
    gold = [Example("Drug A lowers blood pressure.", "Trial. Drug A lowered blood pressure.", "SUPPORT")]
    transfer = [Example("Drug A raises blood pressure.", "Trial. Drug A lowered blood pressure.", "NO_EVIDENCE")]
    config = TrainingConfig(backbone=teacher, output=str(tmp_path), teacher=teacher, max_length=64)

    examples, targets = training_run._distillation_targets(config, gold, transfer, lambda message: None)

    assert [example.claim for example in examples] == [gold[0].claim, transfer[0].claim]
    assert targets.gold.tolist() == [True, False]
    assert targets.probabilities.shape == (2, 3)
    assert targets.probabilities.sum(axis=1) == pytest.approx([1.0, 1.0])

    def refuse(*args: object, **kwargs: object) -> CrossEncoderVerifier:
        raise AssertionError("the teacher was loaded again")

    monkeypatch.setattr(CrossEncoderVerifier, "load", refuse)
    _, stored = training_run._distillation_targets(config, gold, transfer, lambda message: None)
    assert stored.probabilities == pytest.approx(targets.probabilities)  # read back, not recomputed
    longer = TrainingConfig(backbone=teacher, output=str(tmp_path), teacher=teacher, max_length=128)
    with pytest.raises(AssertionError, match="loaded again"):  # another reading is other labels
        training_run._distillation_targets(longer, gold, transfer, lambda message: None)
