"""Which abstracts make product-shaped pairs: training-split ones for training, dev-split ones for dev, and never one
of the other side or of the BioASQ benchmark, whether it comes back under the same id or under another corpus's."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from django.conf import settings

from verifier.datasets import DEV_SPLITS, read_split
from verifier.product_pools import product_pools, sentence_keys

FINDING = "Treatment with {drug} reduced the {outcome} in adults with chronic kidney disease over two years."


def _abstract(drug: str, outcome: str) -> list[str]:
    return [
        f"Chronic kidney disease is common, and {drug} is one candidate therapy among many others.",
        FINDING.format(drug=drug, outcome=outcome),
        f"These findings support further trials of {drug} in {outcome} prevention for kidney patients.",
    ]


def _write_lines(path: Path, records: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(record) + "\n" for record in records)
    if path.suffix == ".gz":
        with gzip.open(path, "wt", encoding="utf-8") as handle:
            handle.write(text)
    else:
        path.write_text(text, encoding="utf-8")


def _claim(number: int, doc: int) -> dict[str, object]:
    return {"id": number, "claim": f"Claim {number}.", "evidence": {str(doc): [{"sentences": [1], "label": "SUPPORT"}]}}


@pytest.fixture
def data_root(tmp_path: Path) -> Path:
    scifact = {1: ("scilimab", "risk of dialysis"), 2: ("sharedumab", "rate of falls"), 3: ("testumab", "mortality")}
    _write_lines(
        tmp_path / "scifact/corpus.jsonl.gz",
        [{"doc_id": i, "title": f"Doc {i}", "abstract": _abstract(*v)} for i, v in scifact.items()],
    )
    _write_lines(tmp_path / "scifact/claims_train.jsonl", [_claim(1, 1), _claim(2, 2)])
    _write_lines(tmp_path / "scifact/claims_dev.jsonl", [_claim(3, 2)])  # doc 2 is cited by train and dev
    # HealthVer's train doc 5 is CovidFact's... no: its dev doc 9 restates CovidFact's train doc 5 under another id.
    _write_lines(
        tmp_path / "healthver/corpus.jsonl",
        [
            {"doc_id": 5, "title": "", "abstract": _abstract("healthumab", "viral load")},
            {"doc_id": 9, "title": "", "abstract": _abstract("copiedumab", "hospital stay")},
        ],
    )
    _write_lines(tmp_path / "healthver/claims_train.jsonl", [_claim(4, 5)])
    _write_lines(tmp_path / "healthver/claims_dev.jsonl", [_claim(5, 9)])
    _write_lines(
        tmp_path / "covidfact/corpus.jsonl",
        [{"doc_id": 9, "title": "", "abstract": _abstract("copiedumab", "hospital stay")}],
    )
    _write_lines(tmp_path / "covidfact/claims_train.jsonl", [_claim(6, 9)])
    _write_lines(
        tmp_path / "citation_integrity/corpus.jsonl",
        [
            {"doc_id": 20, "title": "", "abstract": _abstract("citumab", "hospital admissions")},
            {"doc_id": 21, "title": "", "abstract": _abstract("benchumab", "pain scores")},
            {"doc_id": 22, "title": "", "abstract": _abstract("devumab", "blood pressure")},
        ],
    )
    _write_lines(tmp_path / "citation_integrity/claims_train.jsonl", [_claim(7, 20), _claim(8, 21)])
    _write_lines(tmp_path / "citation_integrity/claims_dev.jsonl", [_claim(9, 22)])
    benchmark = " ".join(["Benchmark title.", *_abstract("benchumab", "pain scores")])
    _write_lines(tmp_path / "bioasq/benchmark/corpus.jsonl.gz", [{"pmid": "777", "text": benchmark}])
    scifact_copy = " ".join(["Doc 1.", *_abstract("scilimab", "risk of dialysis")])
    _write_lines(tmp_path / "bioasq/benchmark/distractors.jsonl.gz", [{"pmid": "S2:1", "text": scifact_copy}])
    return tmp_path


def test_training_keeps_only_abstracts_no_dev_claim_or_benchmark_question_reads(data_root: Path) -> None:
    pools = product_pools(data_root)
    training = {source.document.doc_id for source in pools.training}
    dev = {source.document.doc_id for source in pools.dev}
    # scifact:2 is cited by a dev claim; covidfact:9 restates the dev healthver:9; citation_integrity:21 is the
    # benchmark's. scifact:1 stays: the benchmark's SciFact distractors are the SciFact corpus itself.
    assert training == {"scifact:1", "healthver:5", "citation_integrity:20"}
    # healthver:9 is restated by a training abstract (CovidFact's), so dev drops it too; scifact:2 is on both sides.
    assert dev == {"citation_integrity:22"}


def test_a_source_document_keeps_the_rationale_finding(data_root: Path) -> None:
    (source,) = [s for s in product_pools(data_root).training if s.document.doc_id == "scifact:1"]
    assert 1 in source.findings


def test_the_shared_data_pools_share_no_abstract() -> None:
    data_root = settings.VERIMED.paths.data_dir
    pools = product_pools(data_root)
    assert len(pools.training) > 1000
    assert len(pools.dev) > 300
    training_keys = {key for s in pools.training for key in sentence_keys(s.document.sentences)}
    dev_keys = {key for s in pools.dev for key in sentence_keys(s.document.sentences)}
    assert not training_keys & dev_keys
    # Checked against the dev splits as read, not through the pools' own bookkeeping.
    dev_documents = {
        key for split in DEV_SPLITS for p in read_split(data_root, split) for key in sentence_keys(p.document.sentences)
    }
    assert not training_keys & dev_documents
