"""`evaluate deep-check` end to end on a tiny claims file, with the registry's fake model and verifier.

These tests check the evaluation's plumbing, not the quality of any split or verdict: the fake model splits a
compound exactly where the compound builder joined its two source claims (generator/fake_claims.py), and the fake
classifier judges by word overlap, so the deep check's and the gold split's perfect scores here hold by construction.
What they show is that each claim's verdict reaches the figures, that the plain verdict is scored on the whole
sentence, and that every figure the issue names is in the result."""

from __future__ import annotations

import json
from pathlib import Path

from generator.base import LLMSettings
from verifier.deep_check_evaluation import evaluate_deep_check, format_deep_check_table
from verifier.fake_classifier import FakeClaimClassifier
from verifier.fake_evidence import FakeEvidenceFinder
from verifier.verify import AnswerVerifier

CORPUS = [
    {"doc_id": 1, "title": "Zorvistatin trial.", "abstract": ["Zorvistatin lowers blood pressure.", "It is safe."]},
    {"doc_id": 2, "title": "Knee surgery.", "abstract": ["Pain fell after knee surgery."]},
]
SUPPORTED = [{"label": "SUPPORT", "sentences": [0]}]
CLAIMS = [
    {"id": 1, "claim": "Zorvistatin lowers blood pressure.", "evidence": {"1": SUPPORTED}},
    {"id": 2, "claim": "Zorvistatin is safe.", "evidence": {"1": SUPPORTED}},
    {"id": 3, "claim": "Zorvistatin cures migraine headaches.", "evidence": {}, "cited_doc_ids": [1]},
]


def claims_and_corpus(folder: Path) -> tuple[Path, Path]:
    claims, corpus = folder / "claims.jsonl", folder / "corpus.jsonl"
    claims.write_text("".join(json.dumps(record) + "\n" for record in CLAIMS))
    corpus.write_text("".join(json.dumps(record) + "\n" for record in CORPUS))
    return claims, corpus


def test_the_evaluation_scores_each_claim_of_the_split_it_is_given(tmp_path: Path) -> None:
    (claims, corpus), items = claims_and_corpus(tmp_path), tmp_path / "out.items.jsonl"
    written: list[str] = []

    result = evaluate_deep_check(
        claims,
        corpus=corpus,
        limit=None,
        verifier=AnswerVerifier(FakeClaimClassifier(), FakeEvidenceFinder()),
        endpoint=LLMSettings(base_url="", model="fake", server_kind="fake"),
        serve=None,
        model_cache=tmp_path,
        timed_answers=1,
        write=written.append,
        items_path=items,
    )

    assert (result["compounds"], result["n"], result["supported"]) == (3, 3, 1)
    # The fake split gives back the two source claims word for word: the perfect scores below follow from that.
    texts = {str(record["id"]): record["claim"] for record in CLAIMS}
    assert [[text for text, _ in item["deep_claims"]] for item in result["items"]] == [
        [texts[str(claim)] for claim in item["claims"]] for item in result["items"]
    ]
    # "…lowers blood pressure, and zorvistatin cures migraine headaches": SUPPORT whole, PARTIAL split.
    assert (result["plain"]["balanced_accuracy"], result["plain"]["balanced_accuracy_leaning"]) == (0.75, 0.75)
    assert result["deep"]["balanced_accuracy"] == result["deep"]["balanced_accuracy_leaning"] == 1.0
    assert result["deep"]["part_f1"] == 1.0
    assert result["deep"]["claims_per_sentence"] == 2.0
    assert {"seconds_per_sentence_p50", "seconds_per_sentence_p95"} <= result["deep"].keys()
    assert result["llm_prompt_tokens_per_s"] is None  # no server to probe: the fake model
    assert result["answers"]["n"] == 0  # fewer than six compounds: no six-sentence answer to time
    assert [json.loads(line)["deep"] for line in items.read_text().splitlines()] == [
        item["deep"] for item in result["items"]
    ]
    assert "deep " in format_deep_check_table(result)


def test_without_the_model_the_gold_split_is_scored_on_the_two_source_claims(tmp_path: Path) -> None:
    claims, corpus = claims_and_corpus(tmp_path)

    result = evaluate_deep_check(
        claims,
        corpus=corpus,
        limit=None,
        verifier=AnswerVerifier(FakeClaimClassifier(), FakeEvidenceFinder()),
        # Never reached: the run must not need a model server.
        endpoint=LLMSettings(base_url="http://127.0.0.1:9/v1", model="absent", server_kind="llama.cpp"),
        serve=None,
        model_cache=tmp_path,
        timed_answers=0,
        write=lambda line: None,
        with_model=False,
    )

    assert (result["deep"], result["model"], result["llm_prompt_tokens_per_s"]) == (None, None, None)
    assert result["plain"]["balanced_accuracy"] == 0.75
    # The gold split is the two source claims, each judged on its own: the migraine claim fails, so with the fake
    # classifier every compound is right by construction.
    assert result["gold_split"]["balanced_accuracy"] == result["gold_split"]["balanced_accuracy_leaning"] == 1.0
    assert result["gold_split"]["auc"] == result["gold_split"]["best_balanced_accuracy"] == 1.0
    assert result["gold_split"]["second_claim"]["best_balanced_accuracy"] == 1.0
    assert {"auc", "best_balanced_accuracy"} <= result["plain"].keys()
    table = format_deep_check_table(result)
    assert [line.split()[0] for line in table.splitlines()[2:]] == ["plain", "gold", "its"]
    assert "without the model" in table
