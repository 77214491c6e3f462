"""Reading every SciFact-format release in shared/data and the raw HealthVer CSV, and refusing malformed files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.conf import settings

from verifier.datasets import (
    DEV_SPLITS,
    TRAIN_SPLITS,
    DatasetFormatError,
    Split,
    normalise_label,
    read_healthver_csv,
    read_scifact_pairs,
    read_split,
)

DATA: Path = settings.VERIMED.paths.data_dir

# (claim, cited document) pairs per split, counted independently from the raw files.
EXPECTED_PAIRS = {
    ("scifact", "train"): 919,
    ("healthver", "train"): 5292,
    ("covidfact", "train"): 940,
    ("citation_integrity", "train"): 2138,
    ("scifact", "dev"): 339,
    ("healthver", "dev"): 940,
    ("citation_integrity", "dev"): 316,
}


@pytest.mark.parametrize("split", [*TRAIN_SPLITS, *DEV_SPLITS], ids=lambda split: split.claims)
def test_every_shared_split_reads_with_rationales_inside_the_document(split: Split) -> None:
    pairs = read_split(DATA, split)
    kind = "train" if "train" in split.claims else "dev"
    assert len(pairs) == EXPECTED_PAIRS[(split.name, kind)]
    assert {pair.label for pair in pairs} <= {"SUPPORT", "CONTRADICT", "NO_EVIDENCE"}
    for pair in pairs:
        assert pair.document.sentences
        assert all(0 <= index < len(pair.document.sentences) for index in pair.rationale)
        if pair.label == "NO_EVIDENCE":
            assert pair.rationale == ()


def test_refute_means_contradict_and_a_cited_document_without_evidence_is_no_evidence() -> None:
    pairs = read_split(DATA, DEV_SPLITS[2])  # Citation-Integrity writes REFUTE
    assert any(pair.label == "CONTRADICT" for pair in pairs)
    scifact = read_split(DATA, DEV_SPLITS[0])
    first = next(pair for pair in scifact if pair.claim_id == "1")
    assert first.label == "NO_EVIDENCE"
    assert first.rationale == ()
    three = next(pair for pair in scifact if pair.claim_id == "3")
    assert three.label == "SUPPORT"
    assert three.rationale == (2, 5, 7)


def test_the_raw_healthver_csv_reads_as_passages() -> None:
    pairs = read_healthver_csv(DATA / "healthver" / "healthver_dev.csv")
    assert len(pairs) == 1917
    assert {pair.label for pair in pairs} == {"SUPPORT", "CONTRADICT", "NO_EVIDENCE"}
    assert all(pair.document.sentences and pair.rationale == () for pair in pairs)


@pytest.mark.parametrize(
    ("raw", "label"),
    [("Supports", "SUPPORT"), ("REFUTE", "CONTRADICT"), ("Neutral", "NO_EVIDENCE"), ("NOT ENOUGH INFO", "NO_EVIDENCE")],
)
def test_label_names_are_normalised(raw: str, label: str) -> None:
    assert normalise_label(raw) == label


def test_malformed_files_get_a_clear_error(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"doc_id": 1, "title": "T", "abstract": ["One.", "Two."]}) + "\n")
    claims = tmp_path / "claims.jsonl"
    claims.write_text('{"id": 1, "claim": "x", "doc_ids": [1]}\n{"id": 2, "claim": \n')
    with pytest.raises(DatasetFormatError, match=r"claims.jsonl:2: not JSON"):
        read_scifact_pairs(claims, corpus)
    claims.write_text('{"id": 1, "claim": "x", "doc_ids": [9]}\n')
    with pytest.raises(DatasetFormatError, match="document 9 is not in"):
        read_scifact_pairs(claims, corpus)
    claims.write_text('{"id": 1, "claim": "x", "evidence": {"1": [{"sentences": [0], "label": "MAYBE"}]}}\n')
    with pytest.raises(DatasetFormatError, match="unknown label"):
        read_scifact_pairs(claims, corpus)
    bad_csv = tmp_path / "bad.csv"
    bad_csv.write_text("id,claim\n1,x\n")
    with pytest.raises(DatasetFormatError, match="missing columns"):
        read_healthver_csv(bad_csv)


def test_a_plain_text_abstract_is_split_into_sentences(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"doc_id": "a", "abstract": "Dose was 2.5 mg vs. placebo. It worked."}) + "\n")
    claims = tmp_path / "claims.jsonl"
    claims.write_text('{"id": 1, "claim": "It worked.", "cited_doc_ids": ["a"]}\n')
    [pair] = read_scifact_pairs(claims, corpus)
    assert pair.document.sentences == ("Dose was 2.5 mg vs. placebo.", "It worked.")
    assert pair.document.title == ""


def test_citation_integrity_always_puts_its_rationale_first_and_the_tagger_leaves_it_out() -> None:
    from verifier.datasets import POSITION_ARTIFACT_SPLITS, read_training_pairs

    integrity = [split for split in (*TRAIN_SPLITS, *DEV_SPLITS) if split.name == "citation_integrity"]
    for split in integrity:
        rationales = [pair.rationale for pair in read_split(DATA, split) if pair.rationale]
        assert rationales
        assert all(rationale == (0,) for rationale in rationales)  # the artifact the tagger must not learn
    kept = read_training_pairs(DATA, exclude=POSITION_ARTIFACT_SPLITS)
    assert len(kept) == 919 + 5292 + 940


def test_citation_slot_markers_are_read_out_of_claims() -> None:
    from verifier.datasets import claim_text

    raw = "Cirrhosis raises the risk [<|other_cit|>] of death [<|multi_cit|>]. See<|cit|>."
    assert claim_text(raw) == "Cirrhosis raises the risk of death. See."


def test_no_citation_integrity_claim_keeps_a_marker() -> None:
    from verifier.datasets import DEV_SPLITS, read_split

    (split,) = [split for split in DEV_SPLITS if split.name == "citation_integrity"]
    claims = [pair.claim for pair in read_split(settings.VERIMED.paths.data_dir, split)]
    assert claims
    assert not any("<|" in claim for claim in claims)
