"""`evaluate answers`: which questions each split holds, and how the bottom line is scored against the gold answer.

The retrieval and the verifier here are the fast fakes (FakeEmbedder, the word-overlap classifier): these tests are
about the measuring, not about the models; the real models are measured by the benchmark itself.
"""

from __future__ import annotations

import csv
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from generator.base import LLMSettings
from generator.generation_settings import GenerationSettings
from indexer.evaluation_index import build_evaluation_index
from indexer.fake_embedder import FakeEmbedder
from indexer.hybrid import HybridSettings
from verifier.answer_evaluation import (
    ANSWERS_FILE,
    MODEL_READINGS_FILE,
    AnsweringModel,
    AnswerSets,
    ReadingCache,
    SetReport,
    evaluate_answers,
    read_questions,
    set_indexes,
    wilson_interval,
)
from verifier.bottom_line import AbstractVote, BottomLineRule, DevQuestion, decide_bottom_line, fit_bottom_line_rule
from verifier.bottom_line_fit import answer_shares, dev_weights
from verifier.extra_training import PUBMEDQA_LABELLED, PUBMEDQA_TEST_IDS, pubmedqa_pairs
from verifier.fake_classifier import FakeClaimClassifier
from verifier.fake_evidence import FakeEvidenceFinder
from verifier.verdicts import CONTRADICT, SUPPORT
from verifier.verify import AnswerVerifier
from verifier.yes_no_sets import (
    BIOASQ,
    PUBMEDQA,
    PUBMEDQA_EXTRA,
    bioasq_questions,
    pubmedqa_extra_items,
    pubmedqa_questions,
    pubmedqa_records,
)

PQAL = {
    "101": {
        "QUESTION": "Is aspirin effective for preventing colorectal adenoma?",
        "CONTEXTS": ["We randomised 500 adults to aspirin or placebo."],
        "LONG_ANSWER": "Aspirin is effective for preventing colorectal adenoma.",
        "final_decision": "yes",
    },
    "102": {
        "QUESTION": "Is vitamin E effective for preventing stroke?",
        "CONTEXTS": ["A cohort of 9,000 nurses took vitamin E for ten years."],
        "LONG_ANSWER": "Vitamin E is not effective for preventing stroke.",
        "final_decision": "no",
    },
    "103": {
        "QUESTION": "Is zinc useful for the common cold?",
        "CONTEXTS": ["Trials of zinc lozenges disagree."],
        "LONG_ANSWER": "The evidence on zinc is inconsistent.",
        "final_decision": "maybe",
    },
    "104": {
        "QUESTION": "Starting insulin in type 2 diabetes: continue oral agents?",  # a title question: no claim
        "CONTEXTS": ["A survey of insulin starts in type 2 diabetes."],
        "LONG_ANSWER": "Oral agents were continued by most.",
        "final_decision": "yes",
    },
    "105": {
        "QUESTION": "Is metformin associated with lower cancer incidence?",
        "CONTEXTS": ["A registry study of metformin users."],
        "LONG_ANSWER": "Metformin is associated with lower cancer incidence.",
        "final_decision": "yes",
    },
}
TEST_IDS = {"101": "yes", "102": "no", "103": "maybe", "104": "yes"}


def pqal_files(folder: Path, items: dict[str, dict[str, Any]] = PQAL) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    data, ids = folder / "ori_pqal.json", folder / "test_ground_truth.json"
    data.write_text(json.dumps(items))
    ids.write_text(json.dumps(TEST_IDS))
    return data, ids


@pytest.fixture
def pqal(tmp_path: Path) -> tuple[Path, Path]:
    return pqal_files(tmp_path)


def test_the_test_split_is_the_official_ids_and_dev_is_what_the_verifier_never_trained_on(pqal):
    data, ids = pqal
    assert {question.qid for question in pubmedqa_questions(data, ids, split="test")} == set(TEST_IDS)
    # 105 is a readable yes outside the test ids: the verifier trained on it, so it is not dev.
    assert pubmedqa_questions(data, ids, split="dev") == []
    with pytest.raises(ValueError, match="unknown PubMedQA split"):
        pubmedqa_questions(data, ids, split="train")


def test_the_dev_split_of_the_real_pqal_shares_no_question_with_the_test_ids_or_the_verifiers_training(
    data_dir, monkeypatch
):
    # Which items become training pairs does not depend on how their abstracts split into sentences: skip the splitter.
    monkeypatch.setattr("verifier.extra_training.sentence_texts", lambda text: [text])
    dev = pubmedqa_questions(data_dir / PUBMEDQA_LABELLED, data_dir / PUBMEDQA_TEST_IDS, split="dev")
    test_ids = set(json.loads((data_dir / PUBMEDQA_TEST_IDS).read_text()))
    trained = {pair.claim_id.removeprefix("pubmedqa:") for pair in pubmedqa_pairs(data_dir)}
    dev_ids = {question.qid for question in dev}
    assert dev_ids
    assert not dev_ids & test_ids
    assert not dev_ids & trained
    # Everything outside the test ids is either trained on or dev: nothing silently lost.
    all_ids = set(json.loads((data_dir / PUBMEDQA_LABELLED).read_text()))
    assert dev_ids | trained == all_ids - test_ids


def test_pubmedqa_abstracts_are_indexed_as_published_with_their_conclusion(pqal):
    data, _ = pqal
    records = {record.pmid: record for record in pubmedqa_records(data)}
    assert records["102"].abstract.endswith("Vitamin E is not effective for preventing stroke.")
    assert records["102"].abstract.startswith("A cohort")


def _write_extra_csv(path: Path) -> Path:
    """PubMedQA's CSV columns as the shared subset has them: the PMID first, CONTEXTS a Python list literal."""
    rows = [
        ("201", "Does folic acid prevent neural tube defects?", ["Women took folic acid.", "Defects fell."], "yes"),
        ("202", "Does ginkgo improve memory in the elderly?", ["Ginkgo or placebo for six months."], "no"),
        ("203", "Do audiologic characteristics predict outcomes?", ["Children's 'language' scores."], ""),
        ("101", "Is aspirin effective for preventing colorectal adenoma?", ["A copy of a PQA-L test item."], "yes"),
    ]
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["", "QUESTION", "CONTEXTS", "LABELS", "final_decision", "LONG_ANSWER"])
        for pmid, question, contexts, decision in rows:
            writer.writerow([pmid, question, repr(contexts), "[]", decision, f"Conclusion of {pmid}."])
    return path


def test_extra_pubmedqa_items_add_their_abstracts_and_yes_no_dev_questions_but_never_a_pqal_item(pqal, tmp_path):
    data, _ids = pqal
    records, questions = pubmedqa_extra_items(_write_extra_csv(tmp_path / "extra.csv"), data)
    assert [record.pmid for record in records] == ["201", "202", "203"]
    assert records[0].abstract == "Women took folic acid. Defects fell. Conclusion of 201."
    assert records[2].abstract.startswith("Children's 'language' scores.")
    assert [(q.qid, q.gold, q.own_pmids, q.source) for q in questions] == [
        ("201", "yes", ("201",), PUBMEDQA_EXTRA),
        ("202", "no", ("202",), PUBMEDQA_EXTRA),
    ]


def test_an_extra_csv_with_a_contexts_cell_that_is_not_a_list_of_strings_is_refused_by_pmid(pqal, tmp_path):
    data, _ids = pqal
    path = tmp_path / "extra.csv"
    path.write_text(',QUESTION,CONTEXTS,final_decision,LONG_ANSWER\n301,Does X cure Y?,"[\'unclosed",yes,Yes.\n')
    with pytest.raises(ValueError, match="CONTEXTS of PMID 301 is not a list of strings"):
        pubmedqa_extra_items(path, data)


def test_extra_items_are_dev_questions_only_and_their_abstracts_are_searched_in_both_splits(pqal, tmp_path):
    data, ids = pqal
    sets = AnswerSets(pubmedqa=data, pubmedqa_ids=ids, pubmedqa_extra=_write_extra_csv(tmp_path / "extra.csv"))
    asked = {}
    for split in ("dev", "test"):
        for _name, _corpus, questions, index in set_indexes(
            sets, split=split, index_root=tmp_path / split, embedder=FakeEmbedder(), write=print
        ):
            asked[split] = {q.qid for q in questions}
            assert {"201", "202", "203", "101"} <= set(index.articles)
            index.close()
    assert asked["test"] == set(TEST_IDS)
    assert {"201", "202"} <= asked["dev"]
    assert not asked["dev"] & set(TEST_IDS)


def test_on_the_real_data_the_extra_csv_brings_no_test_question_and_mostly_yes_answers(data_dir: Path) -> None:
    pqal = data_dir / "pubmedqa" / "ori_pqal.json"
    records, questions = pubmedqa_extra_items(data_dir / "pubmedqa" / "pubmedqa_subset_intelligence_inlpt.csv", pqal)
    test_ids = set(json.loads((data_dir / "pubmedqa" / "test_ground_truth.json").read_text()))
    assert len(records) == 166
    assert len(questions) == 131
    assert not {q.qid for q in questions} & (test_ids | set(json.loads(pqal.read_text())))
    assert sum(q.gold == "no" for q in questions) == 6


def test_pubmedqa_dev_groups_weigh_pqal_answer_shares_outside_test_and_each_benchmark_counts_half(pqal):
    data, ids = pqal
    # Outside the test ids the fixture holds one item, 105, a yes: the shares never read the test answers.
    assert answer_shares(data, ids) == {"yes": 1.0, "no": 0.0, "maybe": 0.0}
    shares = {"yes": 0.552, "no": 0.338, "maybe": 0.11}
    both = dev_weights(shares=shares, with_bioasq=True)
    assert both == pytest.approx({"pubmedqa:yes": 0.276, "pubmedqa:no": 0.169, "pubmedqa:maybe": 0.055, BIOASQ: 0.5})
    assert dev_weights(shares=shares, with_bioasq=False) == pytest.approx(
        {"pubmedqa:yes": 0.552, "pubmedqa:no": 0.338, "pubmedqa:maybe": 0.11}
    )


def test_the_fit_scores_a_rule_on_the_answer_shares_not_on_the_dev_sets_own_mix():
    """The same votes, gold yes in 126 questions and no in 6: a flat rule reads them yes, a steep one no. Counted as
    they come the flat rule wins (126 of 132); weighted by answer shares that favour no, the steep one does."""
    first_no = AbstractVote(pmid="no-0", rank=0, leaning=CONTRADICT, shown=CONTRADICT, probabilities={CONTRADICT: 0.9})
    later_yes = tuple(
        AbstractVote(pmid=f"yes-{rank}", rank=rank, leaning=SUPPORT, shown=SUPPORT, probabilities={SUPPORT: 0.5})
        for rank in (1, 2, 3)
    )
    votes = (first_no, *later_yes)
    dev = [DevQuestion(votes=votes, gold="yes", source="pubmedqa:yes")] * 126
    dev += [DevQuestion(votes=votes, gold="no", source="pubmedqa:no")] * 6

    pooled = [replace(question, source="pubmedqa") for question in dev]
    as_they_come = fit_bottom_line_rule(pooled, fitted_on=["toy"])
    weights = dev_weights(shares={"yes": 0.3, "no": 0.7, "maybe": 0.0}, with_bioasq=False)
    by_share = fit_bottom_line_rule(dev, fitted_on=["toy"], source_weights=weights)

    assert decide_bottom_line(votes, by_share).answer == "no"
    assert by_share.dev_accuracy == pytest.approx(0.7)
    assert decide_bottom_line(votes, as_they_come).answer == "yes"


def test_bioasq_questions_are_the_yes_no_ones_with_their_gold(tmp_path):
    path = tmp_path / "questions.jsonl"
    rows = [
        {"id": "a", "body": "Is X a kinase?", "type": "yesno", "exact_answer": "yes", "gold_pmids": ["1"]},
        {"id": "b", "body": "Which genes?", "type": "list", "exact_answer": [["X"]], "gold_pmids": ["2"]},
        {"id": "c", "body": "Is Y secreted?", "type": "yesno", "exact_answer": ["No"], "gold_pmids": []},
    ]
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n\n")
    assert [(q.qid, q.gold, q.own_pmids, q.source) for q in bioasq_questions(path)] == [
        ("a", "yes", ("1",), BIOASQ),
        ("c", "no", (), BIOASQ),
    ]


def test_wilson_interval_is_honest_about_few_questions():
    assert wilson_interval(20, 24) == (0.641, 0.933)
    assert wilson_interval(0, 0) == (0.0, 0.0)
    low, high = wilson_interval(400, 500)
    assert low < 0.8 < high
    assert high - low < 0.08


def test_a_run_reads_each_question_and_counts_an_unreadable_one_as_not_enough_evidence(pqal, tmp_path):
    data, ids = pqal
    embedder = FakeEmbedder()
    index = build_evaluation_index(pubmedqa_records(data), tmp_path / "index", embedder)
    verifier = AnswerVerifier(FakeClaimClassifier(), FakeEvidenceFinder())
    questions = pubmedqa_questions(data, ids, split="test")
    try:
        readings = read_questions(
            questions, index=index, embedder=embedder, retrieval=HybridSettings(), verifier=verifier, write=print
        )
    finally:
        index.close()
    by_id = {reading.question.qid: reading for reading in readings}
    assert by_id["104"].claim is None
    assert by_id["104"].votes == ()
    assert by_id["101"].claim == "Aspirin is effective for preventing colorectal adenoma."
    assert by_id["101"].own_rank == 0
    assert all(reading.own_rank is not None for reading in readings)
    # Each vote carries its abstract's dense-search closeness, rescaled over the abstracts read.
    relevance = sorted(vote.relevance for vote in by_id["101"].votes)
    assert len(relevance) > 1
    assert (relevance[0], relevance[-1]) == (0.0, 1.0)

    rule = BottomLineRule(rank_decay=0.8, unclear_weight=1.0, minimum_weight=0.5, majority=0.7)
    summary = SetReport(name=PUBMEDQA, corpus="5 PQA-L abstracts", readings=readings, rule=rule).summary()
    assert summary["n"] == 4
    assert summary["no_readable_claim"] == 1
    # Each question lands in exactly one cell of its gold row; the unreadable "yes" is Not enough evidence.
    assert sum(sum(row.values()) for row in summary["confusion"].values()) == 4
    assert summary["confusion"]["yes"]["not_enough"] >= 1
    assert summary["abstain_rate"] >= 0.25
    right = sum(summary["confusion"][gold][answer] for gold, answer in [("yes", "yes"), ("no", "no")])
    right += summary["confusion"]["maybe"]["mixed"] + summary["confusion"]["maybe"]["not_enough"]
    assert summary["accuracy"] == right / 4
    # The consensus meter's Unclear share: the votes the page shows as Unclear, over every vote of the set.
    votes = [vote for reading in readings for vote in reading.votes]
    assert votes
    assert summary["unclear_share"] == round(sum(vote.shown == "UNCLEAR" for vote in votes) / len(votes), 3)


def test_an_empty_set_reports_zeros_with_its_own_gold_rows():
    summary = SetReport(name=BIOASQ, corpus="none", readings=[], rule=BottomLineRule()).summary()
    assert set(summary["confusion"]) == {"yes", "no"}
    assert (summary["n"], summary["accuracy"], summary["seconds_per_question"]) == (0, 0.0, None)
    assert summary["unclear_share"] == 0.0


def _fake_model(tmp_path: Path, answer_limit: int) -> AnsweringModel:
    return AnsweringModel(
        endpoint=LLMSettings(base_url="", model="unused", server_kind="fake"),
        serve=None,
        model_cache=tmp_path,
        generation=GenerationSettings(),
        answer_limit=answer_limit,
    )


def _evaluated(
    pqal: tuple[Path, Path], tmp_path: Path, rule: BottomLineRule, model: AnsweringModel | None
) -> dict[str, Any]:
    data, ids = pqal
    return evaluate_answers(
        AnswerSets(pubmedqa=data, pubmedqa_ids=ids),
        limit=None,
        index_root=tmp_path / "indexes",
        embedder=FakeEmbedder(),
        retrieval=HybridSettings(),
        verifier=AnswerVerifier(FakeClaimClassifier(), FakeEvidenceFinder()),
        verifier_model="fake",
        rule=rule,
        model=model,
        write=print,
    )


def test_answered_questions_are_scored_beside_the_bottom_line_on_the_same_questions(pqal, tmp_path):
    report = _evaluated(pqal, tmp_path, BottomLineRule(), _fake_model(tmp_path, answer_limit=2))

    with_llm = report[PUBMEDQA]["with_llm"]
    assert with_llm["n"] == 2
    assert with_llm["probe_tokens_per_s"] is None  # the fake server has no prompt-reading rate to probe
    assert set(with_llm) >= {"bottom_line", "llm_stance", "gain_over_llm_stance", "answer_contradicts_bottom_line"}
    assert sum(with_llm["llm_stance_counts"].values()) == 2
    assert "model_reading" not in report[PUBMEDQA], "the default rule does not weigh the LLM's reading"
    assert not (tmp_path / "indexes" / MODEL_READINGS_FILE).exists()


def test_a_rule_that_weighs_the_llms_reading_has_every_question_read_once_across_runs(pqal, tmp_path):
    rule = BottomLineRule(minimum_weight=0.1, majority=0.6, model_weight=5.0, model_cut=0.0)
    first = _evaluated(pqal, tmp_path, rule, _fake_model(tmp_path, answer_limit=0))
    cache = tmp_path / "indexes" / MODEL_READINGS_FILE
    lines = cache.read_text().splitlines()
    again = _evaluated(pqal, tmp_path, rule, _fake_model(tmp_path, answer_limit=0))

    reading = first[PUBMEDQA]["model_reading"]
    # Every question here asks yes or no by its form (104 is a title asked as a question), so each is read once.
    assert reading["read"] == first[PUBMEDQA]["n"] == len(lines) == 4
    assert reading["probe_tokens_per_s"] is None  # the fake server has no prompt-reading rate to probe
    assert cache.read_text().splitlines() == lines, "the second run read nothing again"
    assert again[PUBMEDQA]["accuracy"] == first[PUBMEDQA]["accuracy"]
    items = first["items"][PUBMEDQA]
    assert all(item["model_reading"] is not None for item in items if item["claim"] is not None)
    # Under a weight of 5, the reading decides every readable question's bottom line.
    for item in items:
        if item["claim"] is not None:
            assert item["bottom_line"] == ("no" if item["model_reading"]["log_odds_no"] > 0 else "yes")


def test_kept_answers_are_not_written_again_and_a_line_cut_short_is(pqal, tmp_path):
    """A run of hundreds of answers takes hours on two cores: one stopped resumes where it stopped."""
    first = _evaluated(pqal, tmp_path, BottomLineRule(), _fake_model(tmp_path, answer_limit=3))
    kept = tmp_path / "indexes" / ANSWERS_FILE
    lines = kept.read_text().splitlines()
    assert len(lines) == 3
    kept.write_text("\n".join(lines[:2]) + "\n" + lines[2][:20])  # the third cut short, as a killed run leaves it

    again = _evaluated(pqal, tmp_path, BottomLineRule(), _fake_model(tmp_path, answer_limit=3))

    now = kept.read_text().splitlines()
    assert now[:2] == lines[:2]
    assert [json.loads(line)["key"] for line in now[3:]] == [json.loads(lines[2])["key"]], (
        "only the cut one written again, on a line of its own"
    )
    answers = [(item["qid"], item.get("answer")) for item in first["items"][PUBMEDQA]]
    assert answers == [(item["qid"], item.get("answer")) for item in again["items"][PUBMEDQA]]
    assert again[PUBMEDQA]["with_llm"]["n"] == 3


def test_a_rule_that_weighs_the_llms_reading_needs_the_model(pqal, tmp_path):
    with pytest.raises(ValueError, match="needs the language model"):
        _evaluated(pqal, tmp_path, BottomLineRule(model_weight=1.0), None)


def test_the_reading_cache_resumes_past_a_line_cut_short(tmp_path):
    calls = []

    def read(question: str, title: str, abstract: str) -> float:
        calls.append(question)
        return -2.5

    path = tmp_path / "readings.jsonl"
    assert ReadingCache(path, "m", read)("Q1?", "", "A") == -2.5
    with path.open("a") as out:
        out.write('{"key": "cut sho')  # a run killed mid-write
    cache = ReadingCache(path, "m", read)
    assert cache("Q1?", "", "A") == -2.5
    assert calls == ["Q1?"], "the reading kept before the cut line is not read again"
    assert ReadingCache(path, "other model", read)("Q1?", "", "A") == -2.5
    assert calls == ["Q1?", "Q1?"], "another model's reading is its own"


def test_a_question_asked_yes_or_no_whose_claim_cannot_be_read_is_decided_by_the_llms_reading_alone(pqal, tmp_path):
    """104 is a title asked as a question: yes/no by its form, its claim unreadable, so it has no votes; the LLM
    reads the question itself, so its reading of the closest abstract is made and decides. A question not asked yes
    or no by its form is never read."""
    rule = BottomLineRule(minimum_weight=0.1, majority=0.6, model_weight=5.0, model_cut=0.0)
    report = _evaluated(pqal, tmp_path, rule, _fake_model(tmp_path, answer_limit=0))

    item = next(item for item in report["items"][PUBMEDQA] if item["qid"] == "104")
    assert item["claim"] is None
    assert item["model_reading"] is not None
    assert item["bottom_line"] == ("no" if item["model_reading"]["log_odds_no"] > 0 else "yes")
    assert report[PUBMEDQA]["confusion"]["yes"]["not_enough"] == 0

    open_question = {**PQAL["104"], "QUESTION": "Which oral agents are continued when insulin is started?"}
    form = tmp_path / "form"
    unread = _evaluated(
        pqal_files(form, {**PQAL, "104": open_question}), form, rule, _fake_model(tmp_path, answer_limit=0)
    )
    original = next(item for item in unread["items"][PUBMEDQA] if item["qid"] == "104")
    assert (original["claim"], original["model_reading"], original["bottom_line"]) == (None, None, "not_enough")


def test_answers_are_written_as_the_product_writes_them_with_the_bottom_line_first(pqal, tmp_path):
    """The fake model opens with what the prompt asks: with the bottom line given first, every answer opens with
    its words; with the setting off (the old prompt), none does."""
    first = _evaluated(pqal, tmp_path, BottomLineRule(), _fake_model(tmp_path, answer_limit=2))
    before = _evaluated(
        pqal,
        tmp_path,
        BottomLineRule(),
        replace(_fake_model(tmp_path, answer_limit=2), generation=GenerationSettings(bottom_line_first=False)),
    )

    answered = [item for item in first["items"][PUBMEDQA] if "answer" in item]
    assert len(answered) == 2
    openings = {"yes": "Yes,", "no": "No,", "mixed": "The evidence is mixed:"}
    openings["not_enough"] = "The evidence is not enough to answer yes or no:"
    for item in answered:
        assert item["bottom_line_first"] == item["bottom_line"]
        assert item["answer"].startswith(openings[item["bottom_line"]])
    assert first[PUBMEDQA]["with_llm"]["bottom_line_first"] == 2
    assert set(first[PUBMEDQA]["with_llm"]["bottom_line_seconds"]) == {"mean", "median"}
    old = [item for item in before["items"][PUBMEDQA] if "answer" in item]
    assert [item["bottom_line_first"] for item in old] == [None, None]
    assert not any(item["answer"].startswith(tuple(openings.values())) for item in old)
    assert before[PUBMEDQA]["with_llm"]["bottom_line_first"] == 0
