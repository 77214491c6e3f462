"""The reranker's training data: which golden questions may enter, how hard negatives are mined and how the groups
are cut. Files written here in the shared data's formats, plus one check of the rule on the real shared data."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from indexer.passages import passage_windows
from indexer.reranker_data import (
    BENCHMARK_CORPUS,
    BENCHMARK_DEV_QUESTIONS,
    BIOASQ_GOLDEN,
    GoldenQuestion,
    HeldOut,
    golden_questions,
    mine_hard_negatives,
    read_groups,
    training_groups,
    training_questions,
    write_groups,
)
from indexer.sentences import sentence_texts

URL = "http://www.ncbi.nlm.nih.gov/pubmed/"


def _question(qid: str, body: str, pmids: list[str], snippets: list[str]) -> dict[str, object]:
    return {
        "id": qid,
        "body": body,
        "type": "factoid",
        "documents": [URL + pmid for pmid in pmids],
        "snippets": [{"text": text, "document": URL + pmids[0], "beginSection": "abstract"} for text in snippets],
    }


@pytest.fixture
def data_root(tmp_path: Path) -> Path:
    golden = tmp_path / BIOASQ_GOLDEN
    golden.mkdir(parents=True)
    first = [
        _question("keep1", "Which gene causes cystic fibrosis?", ["100"], ["CFTR mutations cause cystic fibrosis."]),
        _question("dev1", "Is papilin secreted?", ["200"], ["Papilin is a secreted protein."]),
        # Same wording as a dev question under another id: the benchmark's question, asked again.
        _question("renamed", "is  Papilin SECRETED", ["201"], ["Papilin is secreted by hemocytes."]),
        _question("about-benchmark", "What does drug X treat?", ["300", "301"], ["Drug X treats gout."]),
        _question("no-snippets", "What is Y?", ["400"], []),
    ]
    second = [
        _question("keep1", "A later copy of keep1", ["100"], ["Another snippet."]),
        _question("keep2", "Which receptor does insulin bind?", ["500"], ["Insulin binds the insulin receptor."]),
    ]
    (golden / "7B1_golden.json").write_text(json.dumps({"questions": first}))
    (golden / "8B1_golden.json").write_text(json.dumps({"questions": second}))
    benchmark = tmp_path / BENCHMARK_DEV_QUESTIONS
    benchmark.parent.mkdir(parents=True)
    benchmark.write_text(json.dumps({"id": "dev1", "body": "Is papilin secreted?"}) + "\n")
    with gzip.open(tmp_path / BENCHMARK_CORPUS, "wt") as corpus:
        corpus.write(json.dumps({"pmid": "301", "text": "Drug X. Drug X lowers urate."}) + "\n")
    return tmp_path


def test_golden_questions_are_read_once_each_with_gold_pmids_and_snippets(data_root: Path) -> None:
    questions = {question.id: question for question in golden_questions(data_root)}

    assert set(questions) == {"keep1", "dev1", "renamed", "about-benchmark", "no-snippets", "keep2"}
    assert questions["keep1"].body == "Which gene causes cystic fibrosis?"  # the first appearance wins
    assert questions["about-benchmark"].gold_pmids == {"300", "301"}
    assert questions["keep1"].snippets == ("CFTR mutations cause cystic fibrosis.",)


def test_dev_questions_their_wordings_and_questions_about_the_benchmark_corpus_are_left_out(data_root: Path) -> None:
    assert [question.id for question in training_questions(data_root)] == ["keep1", "keep2"]


def test_on_the_real_data_no_benchmark_question_or_document_reaches_training(data_dir: Path) -> None:
    questions = training_questions(data_dir)
    held_out = HeldOut.read(data_dir)

    assert len(questions) > 2000  # the golden sets hold about 2,285 questions
    assert not {question.id for question in questions} & held_out.question_ids
    assert all(question.gold_pmids.isdisjoint(held_out.benchmark_pmids) for question in questions)
    with (data_dir / BENCHMARK_DEV_QUESTIONS).open() as handle:
        dev_bodies = {" ".join(json.loads(line)["body"].lower().split()).rstrip("?.! ") for line in handle}
    assert not {" ".join(q.body.lower().split()).rstrip("?.! ") for q in questions} & dev_bodies


def test_hard_negatives_are_the_top_results_without_the_gold_pmids() -> None:
    question = GoldenQuestion("q", "Which gene?", frozenset({"2"}), ("snippet",))

    mined = mine_hard_negatives([question], lambda text: ["1", "2", "3", "4"], depth=3)

    assert mined == {"q": ["1", "3"]}


def test_groups_hold_the_snippet_then_length_matched_hard_passages_then_another_questions_snippet() -> None:
    short = "Insulin binds its receptor on the cell surface."
    questions = [
        GoldenQuestion("a", "Which receptor does insulin bind?", frozenset({"9"}), (short, "A second snippet here.")),
        GoldenQuestion("b", "What causes gout?", frozenset({"8"}), ("Urate crystals cause gout.",)),
    ]
    long_abstract = " ".join(f"Sentence number {n} describes a finding about receptors in cells." for n in range(12))
    abstracts = {"1": ("Receptors", long_abstract), "2": ("Cells", long_abstract), "3": ("Gout", long_abstract)}

    groups = training_groups(questions, {"a": ["1", "2"], "b": ["3"]}, abstracts, hard_per_group=2)

    # Question b has one hard negative only, so it gives no group; a gives one per snippet.
    assert sorted(group.positive for group in groups) == sorted(questions[0].snippets)
    sentences = set(sentence_texts(long_abstract))
    for group in groups:
        assert group.query == "Which receptor does insulin bind?"
        hard, other = group.negatives[:2], group.negatives[2]
        # Windows packed to the snippet's length (12 words at least): a title or one whole 10-word sentence here.
        assert all(passage in sentences | {"Receptors", "Cells"} for passage in hard)
        assert other == "Urate crystals cause gout."


def test_groups_round_trip_through_json_lines(tmp_path: Path) -> None:
    questions = [
        GoldenQuestion("a", "Q a?", frozenset(), ("Snippet a.",)),
        GoldenQuestion("b", "Q b?", frozenset(), ("Snippet b.",)),
    ]
    groups = training_groups(questions, {"a": ["1"], "b": ["1"]}, {"1": ("T", "One. Two.")}, hard_per_group=1)

    write_groups(groups, tmp_path / "groups.jsonl")

    assert read_groups(tmp_path / "groups.jsonl") == groups


def test_passage_windows_are_the_title_then_whole_sentences_packed_to_the_budget() -> None:
    abstract = "One two three. Four five six seven. Eight nine."

    assert passage_windows("A title", abstract, max_words=7) == [
        "A title",
        "One two three. Four five six seven.",
        "Eight nine.",
    ]
    assert passage_windows("", "A single very long sentence with many words.", max_words=3) == [
        "A single very long sentence with many words."
    ]
