"""What a finished answer must hold, read from its stored JSON (`manage.py ask --json`, the answer page's JSON and
the API share one payload): the retrieval it rests on, cited sentences, and a verdict for each citation."""

from __future__ import annotations

from typing import Any

import pytest

LABELS = {"SUPPORT", "CONTRADICT", "NO_EVIDENCE", "UNCLEAR", "NO_REFERENCE"}


def assert_cited_and_verified(result: dict[str, Any], *, question: str, gold_pmids: list[str]) -> None:
    """`result` is a done answer to `question` over the default search settings with ten abstracts retrieved."""
    assert result["question"] == question
    assert result["status"] == "done"
    retrieved = result["retrieved"]
    assert len(retrieved) == 10
    assert [doc["score"] for doc in retrieved] == sorted((doc["score"] for doc in retrieved), reverse=True)
    for doc in retrieved:
        assert set(doc) >= {"pmid", "score", "lexical_score", "semantic_score"}
        assert 0 <= doc["lexical_score"] <= 1
        assert 0 <= doc["semantic_score"] <= 1
        assert doc["score"] == pytest.approx(0.7 * doc["lexical_score"] + 0.3 * doc["semantic_score"])
    assert len(set(gold_pmids) & {doc["pmid"] for doc in retrieved}) >= 5, "hybrid search should find most gold"

    assert result["answer"].strip()
    assert result["sentences"], "the answer was split into sentences"
    retrieved_pmids = {doc["pmid"] for doc in retrieved}
    cited = [sentence for sentence in result["sentences"] if sentence["citations"]]
    assert cited, f"the model cited nothing: {result['answer']!r}"
    for sentence in cited:
        assert set(sentence["verdicts"]) == set(sentence["citations"])
        for pmid, verdict in sentence["verdicts"].items():
            assert verdict["label"] in LABELS
            if pmid not in retrieved_pmids:
                assert verdict["label"] == "NO_REFERENCE"
            else:
                assert verdict["label"] != "NO_REFERENCE"
                assert 0 < verdict["confidence"] <= 1
                assert all(isinstance(i, int) for i in verdict["evidence_sentences"])
                assert len(verdict["evidence_spans"]) == len(verdict["evidence_sentences"])
                # An Unclear verdict keeps the model's leaning, and the evidence it leaned on.
                leaning = verdict["leaning"] if verdict["label"] == "UNCLEAR" else verdict["label"]
                assert leaning in ("SUPPORT", "CONTRADICT", "NO_EVIDENCE")
                if leaning in ("SUPPORT", "CONTRADICT"):
                    assert verdict["evidence_sentences"], "a verdict resting on evidence shows it"
    for sentence in result["sentences"]:
        if not sentence["citations"]:
            assert sentence["verdict"] == "UNCITED"

    assert {"retrieval", "generation", "verification", "generation_ttft"} <= set(result["timings_ms"])
    assert set(result["models"]) == {"embedding", "generator", "verifier", "evidence"}
    assert result["models"]["verifier"].startswith("cross-encoder:")
    assert result["settings"]["retrieval"]["lexical_weight"] == 0.7
