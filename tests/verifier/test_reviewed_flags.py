"""Reviewers' flags as extra verifier training pairs: the file's rows, its refusals by line, and what is dropped
(dev claims, dev and benchmark questions, duplicates) against the real dev splits read through the data setting."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from verifier.datasets import ClaimDocumentPair, DatasetFormatError, Document
from verifier.reviewed_flags import (
    DROP_REASONS,
    extra_report,
    held_out,
    normalised,
    read_reviewed_file,
    reviewed_row,
    select_reviewed,
)
from verifier.training import build_examples, train_verifier
from verifier.training_run import reviewed_pairs

DATA = settings.VERIMED.paths.data_dir
ABSTRACT = ("Metformin was given to 5,000 patients.", "No lactic acidosis occurred.", "HbA1c fell by 1.1 points.")


def first_dev_claim(split: str) -> str:
    with (DATA / split / "claims_dev.jsonl").open(encoding="utf-8") as handle:
        return str(json.loads(handle.readline())["claim"])


def row(flag_id: int, claim: str, *, question: str = "Is metformin safe?", label: str = "SUPPORT") -> dict[str, Any]:
    return reviewed_row(
        flag_id=flag_id,
        question_id=7,
        question=question,
        sentence_position=0,
        claim=claim,
        doc_id="111",
        title="Metformin safety",
        sentences=ABSTRACT,
        label=label,
        evidence_sentences=[1],
    )


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in rows), encoding="utf-8")
    return path


def test_a_row_reads_back_as_the_reviewers_pair_with_its_question(tmp_path: Path) -> None:
    path = write_rows(
        tmp_path / "flags.jsonl",
        [row(3, "Metformin did not cause lactic acidosis."), row(4, "Metformin cures gout.", label="NO_EVIDENCE")],
    )

    [supported, unrelated] = read_reviewed_file(path)

    assert supported.pair == ClaimDocumentPair(
        "flag-3",
        "Metformin did not cause lactic acidosis.",
        Document("111", "Metformin safety", ABSTRACT),
        "SUPPORT",
        (1,),
    )
    assert supported.question == "Is metformin safe?"
    assert (unrelated.pair.label, unrelated.pair.rationale) == ("NO_EVIDENCE", ())  # no rationale for no evidence


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"label": ""}, r"flags\.jsonl:2: no reviewer label"),
        ({"label": None}, r"flags\.jsonl:2: no reviewer label"),
        ({"label": "UNCLEAR"}, r"flags\.jsonl:2: label 'UNCLEAR' is not a training label"),
        ({"claim": "  "}, r"flags\.jsonl:2: missing field 'claim'"),
        ({"abstract": []}, r"flags\.jsonl:2: field 'abstract' must be a non-empty list"),
        ({"evidence_sentences": [3]}, r"flags\.jsonl:2: 'evidence_sentences' must be indices into the 3 sentences"),
    ],
)
def test_an_unlabelled_or_malformed_row_is_refused_with_its_line(
    tmp_path: Path, line: dict[str, Any], message: str
) -> None:
    path = write_rows(tmp_path / "flags.jsonl", [row(1, "Metformin lowers HbA1c."), {**row(2, "x"), **line}])
    with pytest.raises(DatasetFormatError, match=message):
        read_reviewed_file(path)


def test_a_line_that_is_not_json_is_refused_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "flags.jsonl"
    path.write_text(json.dumps(row(1, "Metformin lowers HbA1c.")) + "\n\n{not json\n", encoding="utf-8")
    with pytest.raises(DatasetFormatError, match=r"flags\.jsonl:3: not JSON"):
        read_reviewed_file(path)


def test_normalising_ignores_case_spacing_and_trailing_punctuation_only() -> None:
    assert normalised("  Vitamin D\tcures  COVID-19. ") == "vitamin d cures covid-19"
    assert normalised("'Social distancing' could help!?\u201d") == "'social distancing' could help"
    assert normalised("Drug A lowers HbA1c") != normalised("Drug A lowers HbA1c levels")


def test_the_held_out_sets_are_the_real_dev_claims_and_dev_and_benchmark_questions() -> None:
    holdout = held_out(DATA)
    for split in ("scifact", "healthver", "citation_integrity"):
        assert normalised(first_dev_claim(split)) in holdout.claims
    with (DATA / "bioasq/benchmark/questions_dev.jsonl").open(encoding="utf-8") as handle:
        bioasq = [json.loads(line)["body"] for line in handle]
    with (DATA / "healthver/healthver_dev.csv").open(encoding="utf-8", newline="") as handle:
        healthver = {row["question"] for row in csv.DictReader(handle)}
    pubmedqa_test = json.loads((DATA / "pubmedqa/test_ground_truth.json").read_text())
    pubmedqa = json.loads((DATA / "pubmedqa/ori_pqal.json").read_text())
    assert {normalised(q) for q in bioasq} <= holdout.questions
    assert {normalised(q) for q in healthver} <= holdout.questions
    assert normalised(pubmedqa[next(iter(pubmedqa_test))]["QUESTION"]) in holdout.questions
    # A PQA-L question outside the test ids may train (the pubmedqa source does).
    train_only = next(pmid for pmid in pubmedqa if pmid not in pubmedqa_test)
    assert normalised(pubmedqa[train_only]["QUESTION"]) not in holdout.questions


def test_dev_claims_dev_questions_and_duplicates_are_dropped_and_counted(tmp_path: Path) -> None:
    dev_claim = first_dev_claim("scifact")
    with (DATA / "bioasq/benchmark/questions_dev.jsonl").open(encoding="utf-8") as handle:
        dev_question = json.loads(handle.readline())["body"]
    gold = ClaimDocumentPair(
        "g1", "Metformin lowers HbA1c.", Document("s2:9", "Metformin safety", ABSTRACT), "SUPPORT", (2,)
    )
    first = write_rows(
        tmp_path / "week1.jsonl",
        [
            row(1, "Metformin did not cause lactic acidosis."),  # used
            row(2, f"  {dev_claim.upper()} ", label="CONTRADICT"),  # a dev claim, however it is written
            row(3, "Metformin is safe in pregnancy.", question=dev_question.lower() + "  "),  # a BioASQ dev question
            row(4, "metformin lowers  HbA1c", label="NO_EVIDENCE"),  # the gold pair again (the gold label stands)
            row(5, "Metformin did not cause lactic acidosis!"),  # row 1 again
        ],
    )
    second = write_rows(
        tmp_path / "week2.jsonl",
        [
            row(6, "Metformin did not cause lactic acidosis.", label="CONTRADICT"),  # row 1 again, another label
            row(7, "Metformin raises weight.", label="CONTRADICT"),  # used
        ],
    )

    used, counts = reviewed_pairs(DATA, [first, second], training=[gold])

    assert [(pair.claim_id, pair.label) for pair in used] == [("flag-1", "SUPPORT"), ("flag-7", "CONTRADICT")]
    assert [(count.name, count.read, count.used, count.dropped) for count in counts] == [
        ("week1.jsonl", 5, 1, {"dev_claim": 1, "dev_question": 1, "in_training": 1, "duplicate": 1}),
        ("week2.jsonl", 2, 1, {"dev_claim": 0, "dev_question": 0, "in_training": 0, "duplicate": 1}),
    ]
    assert counts[0].summary() == (
        "week1.jsonl: 5 extra examples read, 1 used; dropped 1 dev claim, 1 dev question, 1 in training, 1 duplicate"
    )
    assert extra_report(counts) == {
        "extra_examples_used": 2,
        "extra_examples_dropped": {"dev_claim": 1, "dev_question": 1, "in_training": 1, "duplicate": 2},
        "extra_files": [
            {"file": "week1.jsonl", "read": 5, "used": 1, "dropped": counts[0].dropped},
            {"file": "week2.jsonl", "read": 2, "used": 1, "dropped": counts[1].dropped},
        ],
    }


def test_the_same_claim_against_another_abstract_is_not_a_duplicate(tmp_path: Path) -> None:
    other = {
        **row(2, "Metformin did not cause lactic acidosis."),
        "doc_id": "222",
        "abstract": ["Other trial.", "Acidosis was rare."],
    }
    path = write_rows(tmp_path / "flags.jsonl", [row(1, "Metformin did not cause lactic acidosis."), other])
    holdout = held_out(DATA)

    used, [count] = select_reviewed([(path.name, read_reviewed_file(path))], holdout=holdout, training=[])

    assert [pair.document.doc_id for pair in used] == ["111", "222"]
    assert count.dropped == dict.fromkeys(DROP_REASONS, 0)


@pytest.mark.model
def test_a_short_run_with_flags_records_how_many_it_used_in_training_json(tmp_path: Path) -> None:
    from indexer.packaged_models import MINILM, resolve_model_path
    from verifier.training import TrainingConfig

    flags = write_rows(
        tmp_path / "flags.jsonl",
        [
            row(1, "Metformin did not cause lactic acidosis."),
            row(2, "Metformin caused lactic acidosis.", label="CONTRADICT"),
            row(3, first_dev_claim("healthver"), label="NO_EVIDENCE"),  # dropped: a dev claim
        ],
    )
    used, counts = reviewed_pairs(DATA, [flags], training=[])
    train = build_examples(used, None, input_mode="abstract") * 2
    dev = {"toy": build_examples(used, None, input_mode="abstract")}
    output = tmp_path / "verifier"
    config = TrainingConfig(
        backbone=resolve_model_path(MINILM),
        output=str(output),
        epochs=1,
        batch_size=4,
        max_length=32,
        extra_data=["bioasq", str(flags)],
    )

    train_verifier(config, train, dev, on_progress=lambda message: None, record=extra_report(counts))

    saved = json.loads((output / "training.json").read_text())
    assert saved["extra_examples_used"] == 2
    assert saved["extra_examples_dropped"]["dev_claim"] == 1
    assert saved["extra_files"] == [
        {"file": "flags.jsonl", "read": 3, "used": 2, "dropped": {**dict.fromkeys(DROP_REASONS, 0), "dev_claim": 1}}
    ]
    assert saved["config"]["extra_data"] == ["bioasq", str(flags)]
