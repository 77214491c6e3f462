"""The deep check's measurement items: compounds built deterministically from a SciFact-format claims file by the
issue's rule, their gold, and the seeded half-and-half sample."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verifier.compounds import build_compounds, compound_text, sample_compounds

CORPUS = [
    {"doc_id": 20, "title": "Doc twenty.", "abstract": ["Sentence one.", "Sentence two."]},
    {"doc_id": 3, "title": "Doc three.", "abstract": ["Only sentence."]},
]
# Written out of id order: the builder orders documents and claims by id itself.
CLAIMS = [
    {"id": 9, "claim": "Drug X lowers blood pressure.", "evidence": {"20": [{"label": "SUPPORT", "sentences": [0]}]}},
    {"id": 2, "claim": "Drug X is safe.", "evidence": {"20": [{"label": "SUPPORT", "sentences": [1]}]},
     "cited_doc_ids": [20, 3]},
    {"id": 5, "claim": "Drug X raises mortality.", "evidence": {"20": [{"label": "CONTRADICT", "sentences": [1]}]}},
    {"id": 7, "claim": "HbA1c falls.", "evidence": {}, "cited_doc_ids": [20]},
    {"id": 11, "claim": "Drug Y works.", "evidence": {"3": [{"label": "SUPPORT", "sentences": [0]}]}},
]  # fmt: skip


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    claims, corpus = tmp_path / "claims.jsonl", tmp_path / "corpus.jsonl"
    claims.write_text("".join(json.dumps(record) + "\n" for record in CLAIMS))
    corpus.write_text("".join(json.dumps(record) + "\n" for record in CORPUS))
    return claims, corpus


def test_the_text_joins_a_without_its_full_stop_to_b_lower_cased() -> None:
    assert compound_text("Drug X is safe.", "HbA1c falls.") == "Drug X is safe, and hbA1c falls."
    assert compound_text("No full stop", "B.") == "No full stop, and b."


def test_compounds_follow_document_then_claim_id_order_with_a_supported_first_claim(files: tuple[Path, Path]) -> None:
    compounds = build_compounds(*files)

    assert [(c.document.doc_id, c.first_id, c.second_id) for c in compounds] == [
        # Document 3: claims 2 (NO_EVIDENCE there) and 11; 2 is not SUPPORT for it, so no pair starts with it.
        # Document 20: 2 (SUPPORT), 5 (CONTRADICT), 7 (no evidence), 9 (SUPPORT).
        ("20", "2", "5"),
        ("20", "2", "7"),
        ("20", "2", "9"),
    ]
    assert compounds[0].text == "Drug X is safe, and drug X raises mortality."
    assert [(c.second_label, c.supported) for c in compounds] == [
        ("CONTRADICT", False),
        ("NO_EVIDENCE", False),
        ("SUPPORT", True),
    ]
    assert build_compounds(*files) == compounds  # deterministic


def test_the_seeded_sample_is_half_supported_where_possible_and_stable(files: tuple[Path, Path]) -> None:
    compounds = build_compounds(*files) * 10  # 20 failing, 10 supported

    sample = sample_compounds(compounds, 8)
    assert len(sample) == 8
    assert sum(c.supported for c in sample) == 4
    assert sample_compounds(compounds, 8) == sample
    # Too few supported for half: the failing half fills the rest.
    short = sample_compounds(compounds, 26)
    assert (len(short), sum(c.supported for c in short)) == (26, 10)
    assert sample_compounds(compounds, None) == compounds
