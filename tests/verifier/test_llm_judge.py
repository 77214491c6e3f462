"""Tests for the few-shot LLM judge: label parsing, prompt structure, and labels from the real model server."""

from __future__ import annotations

import pytest

from generator.base import LLMSettings
from generator.llm import OpenAICompatibleLLM
from generator.prompts import JUDGE_EXAMPLES, JUDGE_SYSTEM
from tests.support import TEST_LLM_MODEL
from verifier.llm_judge import LABELS, Judgement, LlmJudge, judge_messages, parse_label

# Loads a real model (see MARKER_BY_FIXTURE in tests/conftest.py for the automatic cases).
pytestmark = pytest.mark.model

CLAIM = "Aspirin reduced mortality in the trial."
EVIDENCE = "In the trial, aspirin reduced all-cause mortality by 20% compared with placebo."


# parse_label


@pytest.mark.parametrize("label", LABELS)
def test_each_label_parses_to_itself(label: str) -> None:
    assert parse_label(label) == label


@pytest.mark.parametrize(
    ("reply", "label"),
    [
        ("support", "SUPPORT"),
        ("Contradict", "CONTRADICT"),
        ("no_evidence", "NO_EVIDENCE"),
        ("NO EVIDENCE", "NO_EVIDENCE"),
        ("no evidence.", "NO_EVIDENCE"),
        ("REFUTE", "CONTRADICT"),
        ("Refutes", "CONTRADICT"),
        ("  SUPPORT\n", "SUPPORT"),
        ("Answer: CONTRADICT", "CONTRADICT"),
        ("SUPPORTED", "SUPPORT"),
    ],
)
def test_it_parses_label_variants(reply: str, label: str) -> None:
    assert parse_label(reply) == label


def test_the_first_label_in_the_reply_wins() -> None:
    assert parse_label("CONTRADICT, not SUPPORT") == "CONTRADICT"
    assert parse_label("SUPPORT rather than NO_EVIDENCE") == "SUPPORT"


@pytest.mark.parametrize("reply", ["", "   ", "maybe", "I cannot tell.", "TRUE", "42"])
def test_garbage_is_no_evidence_never_support(reply: str) -> None:
    assert parse_label(reply) == "NO_EVIDENCE"


def test_unsupported_is_not_read_as_support() -> None:
    assert parse_label("UNSUPPORTED") == "NO_EVIDENCE"


# judge_messages


def test_judge_messages_start_with_the_system_prompt() -> None:
    assert judge_messages(CLAIM, EVIDENCE)[0] == {"role": "system", "content": JUDGE_SYSTEM}


def test_judge_messages_give_every_few_shot_example_as_a_user_assistant_pair() -> None:
    # Written out, not rebuilt from JUDGE_USER and JUDGE_EXAMPLES: a change to either must show here.
    assert judge_messages(CLAIM, EVIDENCE)[1:-1] == [
        {
            "role": "user",
            "content": "Claim: Vitamin C supplementation prevents the common cold.\n"
            "Evidence: Regular vitamin C supplementation did not reduce the incidence of colds in the general "
            "population.\nAnswer:",
        },
        {"role": "assistant", "content": "CONTRADICT"},
        {
            "role": "user",
            "content": "Claim: Aspirin reduces the risk of a second heart attack.\n"
            "Evidence: In patients with a previous myocardial infarction, low-dose aspirin lowered the rate of "
            "recurrent infarction by 25% compared with placebo.\nAnswer:",
        },
        {"role": "assistant", "content": "SUPPORT"},
        {
            "role": "user",
            "content": "Claim: Statins lower the risk of dementia.\n"
            "Evidence: Statins reduced LDL cholesterol by 40% and were well tolerated over five years.\nAnswer:",
        },
        {"role": "assistant", "content": "NO_EVIDENCE"},
        {
            "role": "user",
            "content": "Claim: BRCA1 mutations increase the risk of ovarian cancer.\n"
            "Evidence: Carriers of BRCA1 mutations had a cumulative ovarian cancer risk of 40% by age 70, against "
            "1.3% in the general population.\nAnswer:",
        },
        {"role": "assistant", "content": "SUPPORT"},
        {
            "role": "user",
            "content": "Claim: Metformin use is associated with lower cancer mortality.\n"
            "Evidence: Metformin is the first-line drug for type 2 diabetes and acts mainly by reducing hepatic "
            "glucose output.\nAnswer:",
        },
        {"role": "assistant", "content": "NO_EVIDENCE"},
    ]


def test_the_few_shot_examples_cover_every_label() -> None:
    assert {label for _, _, label in JUDGE_EXAMPLES} == set(LABELS)


def test_the_claim_to_judge_comes_last() -> None:
    last = judge_messages(CLAIM, EVIDENCE)[-1]

    assert last == {"role": "user", "content": f"Claim: {CLAIM}\nEvidence: {EVIDENCE}\nAnswer:"}


def test_judge_messages_alternate_roles_after_the_system_prompt() -> None:
    roles = [message["role"] for message in judge_messages(CLAIM, EVIDENCE)]

    assert roles[0] == "system"
    assert roles[1:] == ["user", "assistant"] * len(JUDGE_EXAMPLES) + ["user"]


# LlmJudge


class RecordingModel:
    """A chat model that answers with a fixed reply and records how it was called."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.calls: list[tuple[list[dict[str, str]], int, float]] = []

    @property
    def model_id(self) -> str:
        return "recorder"

    def complete_chat(self, messages: list[dict[str, str]], *, max_tokens: int, temperature: float = 0.0) -> str:
        self.calls.append((messages, max_tokens, temperature))
        return self.reply


def test_the_judge_sends_the_judge_prompt_and_keeps_the_raw_reply() -> None:
    model = RecordingModel("  Refute.\n")

    judgement = LlmJudge(model).judge(CLAIM, EVIDENCE)

    assert judgement == Judgement(label="CONTRADICT", raw="Refute.")
    messages, max_tokens, temperature = model.calls[0]
    assert messages == judge_messages(CLAIM, EVIDENCE)
    assert max_tokens > 0
    assert temperature == 0.0


def test_the_judge_names_its_model() -> None:
    assert LlmJudge(RecordingModel("SUPPORT")).model_id == "llm-judge:recorder"


@pytest.fixture(scope="module")
def judge(llm_base_url: str) -> LlmJudge:
    return LlmJudge(OpenAICompatibleLLM(LLMSettings(base_url=llm_base_url, model=TEST_LLM_MODEL)))


def test_the_real_model_supports_an_obvious_pair(judge: LlmJudge) -> None:
    judgement = judge.judge(CLAIM, EVIDENCE)

    assert judgement.label == "SUPPORT"
    assert judgement.raw
    assert judge.model_id == f"llm-judge:{TEST_LLM_MODEL}"


def test_the_real_model_tells_a_supported_claim_from_an_unrelated_passage(judge: LlmJudge) -> None:
    # Unambiguous both ways, and answered so by the 0.5B test model and the 1.5B product model alike: a judge that
    # gives every pair one label, or reads its reply wrongly, fails one of the two.
    pairs = [
        (CLAIM, EVIDENCE),
        ("Coffee prevents Parkinson's disease.", "The hospital car park was resurfaced in 2019."),
    ]

    assert [verdict.label for verdict in judge.classify(pairs)] == ["SUPPORT", "NO_EVIDENCE"]
