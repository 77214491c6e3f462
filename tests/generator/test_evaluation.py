"""The order questions are evaluated in (test split first, seeded shuffle, every item once) and the run summary."""

from __future__ import annotations

import json
from pathlib import Path

from generator.answer_model_stance import parse_stance
from generator.evaluation import GenerationRun, PubMedQAItem, evaluation_order, load_pqal

DECISIONS = ["yes"] * 30 + ["no"] * 20 + ["maybe"] * 10


def write_pqal(tmp_path: Path) -> tuple[Path, Path]:
    entries = {
        str(1000 + n): {"QUESTION": f"Question {n}?", "CONTEXTS": [f"Part {n}a.", f"Part {n}b."], "final_decision": d}
        for n, d in enumerate(DECISIONS)
    }
    pqal = tmp_path / "ori_pqal.json"
    pqal.write_text(json.dumps(entries))
    test_ids = tmp_path / "test_ground_truth.json"
    # Grouped by answer, as the real file is: taking it in file order would give one kind of question only.
    test_ids.write_text(json.dumps({pmid: e["final_decision"] for pmid, e in list(entries.items())[:40]}))
    return pqal, test_ids


def test_the_test_split_comes_first_in_a_seeded_shuffle(tmp_path: Path) -> None:
    pqal, test_ids = write_pqal(tmp_path)
    items = load_pqal(pqal)

    ordered = evaluation_order(items, test_ids)

    assert sorted(item.pmid for item in ordered) == sorted(item.pmid for item in items)
    test = set(json.loads(test_ids.read_text()))
    assert {item.pmid for item in ordered[:40]} == test
    assert {item.final_decision for item in ordered[:10]} == {"yes", "no"}  # not ten "yes" in a row
    assert evaluation_order(items, test_ids) == ordered  # the same seed gives the same sample
    assert evaluation_order(items, test_ids, seed=1) != ordered


def test_pqal_items_join_their_context_paragraphs(tmp_path: Path) -> None:
    pqal, _ = write_pqal(tmp_path)

    first = load_pqal(pqal)[0]

    assert first == PubMedQAItem(
        pmid="1000", question="Question 0?", abstract="Part 0a. Part 0b.", final_decision="yes"
    )


def test_a_stance_reply_is_read_from_its_first_word() -> None:
    assert parse_stance("Yes.") == "yes"
    assert parse_stance(" no, it does not") == "no"
    assert parse_stance("Maybe") == "maybe"
    assert parse_stance("The answer is yes") == "maybe"  # anything else counts as undecided


def test_the_summary_counts_sentences_and_cited_sentences_per_answer() -> None:
    run = GenerationRun(model="m", prompt_style="chat", answers=4, sentences=14, cited_sentences=12)

    summary = run.summary()

    assert summary["sentences_per_answer"] == 3.5
    assert summary["cited_sentences_per_answer"] == 3.0
    assert summary["sentence_citation_coverage_pct"] == round(100 * 12 / 14, 1)
