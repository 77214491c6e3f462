"""`evaluate deep-check` end to end on a tiny claims file, with the registry's fake model and verifier.

The fakes are deterministic but made to be wrong in known places, so each figure has one right value, worked out
by hand below, and a figure read from the wrong verdicts, the wrong gold or the wrong split comes out different:
- the fake classifier judges by word overlap (SUPPORT when at least half of the claim's words are in the passage), so
  it misses a paraphrase ("reduces arterial hypertension" for "lowers blood pressure") and is fooled by a claim that
  shares most of its words with the abstract while saying something it does not ("safe in the trial; it cures
  migraine");
- the fake model splits at ", and " and at "; ", so where a source claim holds a "; " its split is finer than the
  gold split (three claims, not two), and finds the failing part that the whole claim hid.
"""

from __future__ import annotations

import json
from pathlib import Path

from generator.base import LLMSettings
from verifier.deep_check_evaluation import evaluate_deep_check, format_deep_check_table
from verifier.fake_classifier import FakeClaimClassifier
from verifier.fake_evidence import FakeEvidenceFinder
from verifier.verify import AnswerVerifier

# The verifier reads doc 1 as "Zorvistatin trial. Zorvistatin lowers blood pressure. It is safe.": its words are
# zorvistatin, trial, lowers, blood, pressure, safe.
CORPUS = [
    {"doc_id": 1, "title": "Zorvistatin trial.", "abstract": ["Zorvistatin lowers blood pressure.", "It is safe."]},
    {"doc_id": 2, "title": "Knee surgery.", "abstract": ["Pain fell after knee surgery."]},
]
SUPPORTED = [{"label": "SUPPORT", "sentences": [0]}]
# claim: gold label for doc 1 / the fake's (its words found in doc 1), P(SUPPORT) the fake gives it
CLAIMS = [
    # SUPPORT / SUPPORT (4 of 4), P 1.0
    {"id": 1, "claim": "Zorvistatin lowers blood pressure.", "evidence": {"1": SUPPORTED}},
    # NO_EVIDENCE / SUPPORT (3 of 5: zorvistatin, safe, trial), P 0.6: wrong as a whole. Split, its parts are
    # "Zorvistatin is safe in the trial." (SUPPORT, 3 of 3) and "It cures migraine." (NO_EVIDENCE, 0 of 2).
    {"id": 2, "claim": "Zorvistatin is safe in the trial; it cures migraine.", "evidence": {}, "cited_doc_ids": [1]},
    # NO_EVIDENCE / NO_EVIDENCE (1 of 4), P 0.125
    {"id": 3, "claim": "Zorvistatin cures migraine headaches.", "evidence": {}, "cited_doc_ids": [1]},
    # SUPPORT / NO_EVIDENCE (1 of 4), P 0.125: the paraphrase the fake misses
    {"id": 4, "claim": "Zorvistatin reduces arterial hypertension.", "evidence": {"1": SUPPORTED}},
    # SUPPORT / SUPPORT (2 of 2), P 1.0
    {"id": 5, "claim": "Zorvistatin is safe.", "evidence": {"1": SUPPORTED}},
]
# The compounds "A, and b" (A a SUPPORT claim, b a later one) and how each reading scores them (T: fully supported):
#
#   A+b  gold  plain (words of the whole, P)  gold split (A, b)  deep check's claims           part points at b
#   1+2  F     T (6 of 8, 0.75)               T (S, S)           S, S, NE -> F (3 claims)      yes
#   1+3  F     T (4 of 7, 0.5714)             F (S, NE)          S, NE -> F                    yes
#   1+4  T     T (4 of 7, 0.5714)             F (S, NE)          S, NE -> F                    yes
#   1+5  T     T (5 of 5, 1.0)                T (S, S)           S, S -> T                     no
#   4+5  T     F (2 of 5, 0.2)                F (NE, S)          NE, S -> F                    no (A fails)
#
# Balanced accuracy is the mean of the recall of T (3 compounds) and of F (2):
#   plain       T found 2/3, F found 0/2: 1/3
#   gold split  T found 1/3, F found 1/2: 5/12
#   deep        T found 1/3, F found 2/2: 2/3
# Part F1, positives the compounds whose b fails (1+2, 1+3): 2 found, 1 false alarm (1+4): P 2/3, R 1, F1 0.8.
# Claims per sentence: (3 + 2 + 2 + 2 + 2) / 5 = 2.2.
EXPECTED_SUPPORTED = [False, False, True, True, True]


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

    assert (result["compounds"], result["n"], result["supported"]) == (5, 5, 3)
    assert [(item["claims"], item["gold"] == "SUPPORT") for item in result["items"]] == [
        (["1", "2"], False),
        (["1", "3"], False),
        (["1", "4"], True),
        (["1", "5"], True),
        (["4", "5"], True),
    ]
    # Where a source claim holds "; " the model's split is not the gold split.
    assert result["items"][0]["deep_claims"] == [
        ["Zorvistatin lowers blood pressure.", "SUPPORT"],
        ["Zorvistatin is safe in the trial.", "SUPPORT"],
        ["It cures migraine.", "NO_EVIDENCE"],
    ]
    assert [item["plain"] for item in result["items"]] == ["SUPPORT"] * 4 + ["NO_EVIDENCE"]
    assert [item["deep"] for item in result["items"]] == ["PARTIAL", "PARTIAL", "PARTIAL", "SUPPORT", "PARTIAL"]
    assert result["plain"]["balanced_accuracy"] == result["plain"]["balanced_accuracy_leaning"] == 0.3333
    assert result["gold_split"]["balanced_accuracy"] == 0.4167
    assert result["deep"]["balanced_accuracy"] == result["deep"]["balanced_accuracy_leaning"] == 0.6667
    assert result["deep"]["part_f1"] == 0.8
    assert result["deep"]["claims_per_sentence"] == 2.2
    assert result["deep"]["sentences_split_by_the_model"] == 5
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
    assert result["plain"]["balanced_accuracy"] == 0.3333
    # The plain verdict's P(SUPPORT) by compound: 0.75, 0.5714, 0.5714, 1.0, 0.2 (gold F, F, T, T, T). Of the six
    # (T, F) pairs, T ranks above F in two (1.0 over both) and ties in one (0.5714 each): AUC 2.5/6. Its best
    # threshold, 1.0, finds T 1/3 and F 2/2: 2/3.
    assert (result["plain"]["auc"], result["plain"]["best_balanced_accuracy"]) == (0.4167, 0.6667)
    # Each source claim judged on its own (the table above): T found 1/3, F found 1/2.
    assert result["gold_split"]["balanced_accuracy"] == result["gold_split"]["balanced_accuracy_leaning"] == 0.4167
    # The weakest claim's P(SUPPORT): 0.6, 0.125, 0.125, 1.0, 0.125. T over F in two pairs (1.0 over both), ties in
    # two (0.125 against 0.125): AUC 3/6. Best threshold 1.0: T 1/3, F 2/2, 2/3.
    assert (result["gold_split"]["auc"], result["gold_split"]["best_balanced_accuracy"]) == (0.5, 0.6667)
    # b alone: 0.6, 0.125, 0.125, 1.0, 1.0. T over F in four pairs, a tie in one: AUC 4.5/6. Threshold 1.0: T 2/3,
    # F 2/2, 5/6.
    second = result["gold_split"]["second_claim"]
    assert (second["auc"], second["best_balanced_accuracy"]) == (0.75, 0.8333)
    table = format_deep_check_table(result)
    assert [line.split()[0] for line in table.splitlines()[2:]] == ["plain", "gold", "its"]
    assert "without the model" in table
