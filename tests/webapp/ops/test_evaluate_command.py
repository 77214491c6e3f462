"""`manage.py evaluate`: the command checks its inputs, hands the settings to the libraries, prints and writes JSON."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError

# Loads a real model (see MARKER_BY_FIXTURE in tests/conftest.py for the automatic cases).
pytestmark = pytest.mark.model


@pytest.mark.model  # the committed verifier and tagger, MiniLM
def test_a_real_verification_run_prints_its_table_and_writes_json(tmp_path: Path) -> None:
    rows = (settings.VERIMED.paths.data_dir / "healthver" / "healthver_dev.csv").read_text().splitlines()
    csv_path = tmp_path / "healthver.csv"
    csv_path.write_text("\n".join(rows[:13]) + "\n")
    out = tmp_path / "hv.json"
    stdout = StringIO()

    call_command(
        "evaluate", "verification", "--claims", str(csv_path), "--format", "healthver-csv",
        "--judge-pairs", "0", "--json", str(out), stdout=stdout,
    )  # fmt: skip

    assert json.loads(out.read_text())["n"] == 12
    assert "same_model_whole_abstract" in stdout.getvalue()
    assert f"wrote {out}" in stdout.getvalue()


def test_missing_retrieval_inputs_are_reported_clearly(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="does not exist"):
        call_command(
            "evaluate",
            "retrieval",
            "--corpus",
            str(tmp_path / "none.jsonl"),
            "--questions",
            str(tmp_path / "q.jsonl"),
            "--qrels",
            str(tmp_path / "r.tsv"),
        )


def test_a_missing_claims_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="does not exist"):
        call_command("evaluate", "verification", "--claims", str(tmp_path / "nope.jsonl"), "--judge-pairs", "0")


def test_a_missing_pubmedqa_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="does not exist"):
        call_command("evaluate", "generation", "--pubmedqa", str(tmp_path / "ori_pqal.json"))


def test_evidence_without_a_trained_tagger_says_how_to_train_one(tmp_path: Path) -> None:
    claims = tmp_path / "claims.jsonl"
    claims.write_text("")
    with pytest.raises(CommandError, match=r"run manage\.py train_evidence"):
        call_command(
            "evaluate", "evidence", "--claims", str(claims), "--corpus", str(claims),
            "--late-fusion", str(tmp_path / "no-tagger"),
        )  # fmt: skip


def test_evaluate_answers_needs_a_set_and_bioasq_needs_its_corpus(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="give --pubmedqa, --bioasq or both"):
        call_command("evaluate", "answers")
    questions = tmp_path / "questions.jsonl"
    questions.write_text("")
    with pytest.raises(CommandError, match="--bioasq needs --corpus"):
        call_command("evaluate", "answers", "--bioasq", str(questions))
    with pytest.raises(CommandError, match="does not exist"):
        call_command("evaluate", "answers", "--pubmedqa", str(tmp_path / "ori_pqal.json"), "--answer-limit", "0")


def test_fit_bottom_line_refuses_a_folder_without_a_checkpoint(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="no checkpoint"):
        call_command("fit_bottom_line", "--model", str(tmp_path), "--pubmedqa", str(tmp_path / "ori_pqal.json"))
