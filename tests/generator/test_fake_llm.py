"""What the fake LLM does beyond the contract: it answers from the prompt's abstracts, cited, and judges claims."""

from __future__ import annotations

import pytest

from generator.answer import ContextAbstract, answer_prompt
from generator.base import LLMSettings, SamplingOptions
from generator.citations import normalize_citations
from generator.fake_llm import REFUSAL, FakeLLM, FakeTokenCounter, overlap_label, word_overlap
from generator.generate import generate_answer, is_refusal
from verifier.llm_judge import LlmJudge

SETTINGS = LLMSettings(base_url="", model="unused", server_kind="fake")
ABSTRACTS = [
    ContextAbstract("101", "Metformin and lactate.", "Metformin was given for two years. No lactic acidosis occurred."),
    ContextAbstract("102", "Statins.", "Statins lowered LDL cholesterol. Muscle pain was rare."),
    ContextAbstract("103", "Weather.", "It rained in Paris all week."),
]
QUESTION = "Does metformin cause lactic acidosis, and do statins lower cholesterol?"


@pytest.mark.parametrize("style", ["chat", "verifai"])
def test_it_answers_with_the_best_sentence_of_each_relevant_abstract_cited(style: str) -> None:
    prompt = answer_prompt(style, QUESTION, ABSTRACTS, abstract_chars=1500)  # type: ignore[arg-type]

    answer = generate_answer(FakeLLM(SETTINGS), prompt, SamplingOptions(max_tokens=200), given_pmids=["101", "102"])

    assert answer.raw_text == (
        "No lactic acidosis occurred (PUBMED:101). Statins lowered LDL cholesterol (PUBMED:102)."
    )
    assert [citation.pmid for citation in answer.normalized.citations] == ["101", "102"]


def test_it_answers_the_last_question_not_the_worked_example() -> None:
    prompt = answer_prompt("chat", "Is it raining in Paris?", ABSTRACTS[2:], abstract_chars=1500)

    reply = "".join(FakeLLM(SETTINGS).stream_chat(list(prompt.messages), SamplingOptions(max_tokens=50)))

    assert reply == "It rained in Paris all week (PUBMED:103)."


def test_it_says_the_abstracts_do_not_answer_when_none_shares_a_word_with_the_question() -> None:
    prompt = answer_prompt("chat", "What causes migraine?", ABSTRACTS, abstract_chars=1500)

    reply = "".join(FakeLLM(SETTINGS).stream_chat(list(prompt.messages), SamplingOptions(max_tokens=50)))

    assert reply == REFUSAL
    assert is_refusal(normalize_citations(reply, ["101"]))


@pytest.mark.parametrize(
    ("claim", "evidence", "label"),
    [
        ("Metformin lowers glucose.", "Metformin lowered glucose and metformin lowers glucose.", "SUPPORT"),
        ("Metformin causes lactic acidosis.", "Metformin did not cause lactic acidosis.", "CONTRADICT"),
        ("Metformin causes lactic acidosis.", "It rained in Paris.", "NO_EVIDENCE"),
    ],
)
def test_as_a_judge_it_labels_by_word_overlap_and_negation(claim: str, evidence: str, label: str) -> None:
    assert overlap_label(claim, evidence)[0] == label
    assert LlmJudge(FakeLLM(SETTINGS)).judge(claim, evidence).label == label


def test_word_overlap_is_the_share_of_the_claims_words_found() -> None:
    assert word_overlap("metformin lactic acidosis", "Lactic acidosis was rare.") == pytest.approx(2 / 3)
    assert word_overlap("", "anything") == 0.0


def test_its_token_counter_counts_words_and_punctuation() -> None:
    assert FakeTokenCounter(SETTINGS).count("Metformin lowers HbA1c.") == 4
    assert FakeTokenCounter(SETTINGS).count("") == 0
