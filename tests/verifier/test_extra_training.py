"""Extra verifier training pairs from BioASQ and PubMedQA: labels from the answers, held-out questions kept out."""

from __future__ import annotations

import json
from collections import Counter

from django.conf import settings

from verifier.extra_training import bioasq_pairs, dev_question_ids, pubmedqa_pairs

DATA = settings.VERIMED.paths.data_dir


def test_no_bioasq_dev_question_enters_training() -> None:
    dev = dev_question_ids(DATA)
    pairs = bioasq_pairs(DATA, exclude_ids=dev)

    assert len(dev) == 91
    assert not {pair.claim_id for pair in pairs} & dev


def test_excluding_a_question_removes_all_its_pairs() -> None:
    everything = bioasq_pairs(DATA, exclude_ids=set())
    one = everything[0].claim_id

    assert one not in {pair.claim_id for pair in bioasq_pairs(DATA, exclude_ids={one})}


def test_bioasq_answers_give_support_and_contradict_and_other_snippets_give_no_evidence() -> None:
    pairs = bioasq_pairs(DATA, exclude_ids=dev_question_ids(DATA))
    counts = Counter(pair.label for pair in pairs)

    assert counts["SUPPORT"] > 350
    assert counts["CONTRADICT"] > 200
    assert counts["NO_EVIDENCE"] == counts["SUPPORT"] + counts["CONTRADICT"]
    for pair in pairs:
        own = pair.document.doc_id == f"bioasq:{pair.claim_id}"
        assert own == (pair.label != "NO_EVIDENCE")  # a NO_EVIDENCE pair reads another question's snippets
        assert pair.rationale == (tuple(range(len(pair.document.sentences))) if own else ())
        assert 1 <= len(pair.document.sentences) <= 4


def test_pubmedqa_test_ids_and_maybe_answers_never_enter_training() -> None:
    test_ids = set(json.loads((DATA / "pubmedqa" / "test_ground_truth.json").read_text()))
    pairs = pubmedqa_pairs(DATA)

    assert pairs
    assert not {pair.claim_id.removeprefix("pubmedqa:") for pair in pairs} & test_ids
    assert {pair.label for pair in pairs} == {"SUPPORT", "CONTRADICT"}
    items = json.loads((DATA / "pubmedqa" / "ori_pqal.json").read_text())
    for pair in pairs[:50]:
        item = items[pair.claim_id.removeprefix("pubmedqa:")]
        assert pair.label == {"yes": "SUPPORT", "no": "CONTRADICT"}[item["final_decision"]]
        assert item["LONG_ANSWER"].split()[0] in " ".join(pair.document.sentences)  # the conclusion is read too


def test_no_yes_no_question_about_a_benchmark_abstract_enters_training() -> None:
    import gzip

    from verifier.extra_training import benchmark_question_ids, bioasq_yes_no_questions

    with gzip.open(DATA / "bioasq/benchmark/corpus.jsonl.gz", "rt", encoding="utf-8") as handle:
        benchmark = {json.loads(line)["pmid"] for line in handle if line.strip()}
    about_benchmark = {
        question["id"]
        for question in bioasq_yes_no_questions(DATA)
        if {url.rstrip("/").rsplit("/", 1)[-1] for url in question.get("documents", [])} & benchmark
    }

    assert len(about_benchmark - dev_question_ids(DATA)) == 13  # the dev questions aside, 13 more
    # What `train_verifier --extra bioasq` leaves out (verifier.training_run.extra_pairs).
    assert about_benchmark <= benchmark_question_ids(DATA)
