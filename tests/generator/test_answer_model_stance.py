"""The written answer's stance as the answer model reads it: its opening "Yes" or "No" when it has one, else one
short call to the model, parsed to yes, no or maybe."""

from __future__ import annotations

import pytest

from generator.answer_model_stance import answer_model_stance, opening_stance, parse_stance
from generator.base import LLMSettings, Message
from generator.fake_llm import FakeLLM


@pytest.mark.parametrize(
    ("answer", "stance"),
    [
        ("Yes, we can detect DNA strand asymmetries (PUBMED:1).", "yes"),
        ("No. The trial found no benefit (PUBMED:2).", "no"),
        ("**No**, it does not (PUBMED:2).", "no"),
        ('"Yes" \u2014 both trials agree.', "yes"),
        ("  yes; though the effect was small.", "yes"),
        ("Yes", "yes"),
        ("No significant difference was found (PUBMED:3).", None),  # "No" opens a sentence, not a stance
        ("Nonetheless, the effect held.", None),
        ("Yes and no: it depends on the dose.", None),
        ("The answer is yes.", None),
        ("Yesterday's trial was stopped.", None),
    ],
)
def test_the_opening_word_is_a_stance_only_when_it_stands_alone(answer: str, stance: str | None) -> None:
    assert opening_stance(answer) == stance


@pytest.mark.parametrize(
    ("reply", "stance"), [("Yes.", "yes"), (" no", "no"), ("Maybe", "maybe"), ("Unclear", "maybe")]
)
def test_the_models_reply_reads_as_yes_no_or_maybe(reply: str, stance: str) -> None:
    assert parse_stance(reply) == stance


class CountingLLM(FakeLLM):
    """The registry's fake model, counting the chat calls made of it."""

    calls = 0

    def complete_chat(self, messages: list[Message], *, max_tokens: int, temperature: float = 0.0) -> str:
        self.calls += 1
        return super().complete_chat(messages, max_tokens=max_tokens, temperature=temperature)


@pytest.fixture
def llm() -> CountingLLM:
    return CountingLLM(LLMSettings(base_url="http://unused", model="fake", server_kind="fake"))


def test_an_answer_that_opens_with_its_stance_costs_no_call(llm: CountingLLM) -> None:
    assert answer_model_stance(llm, "Does X lower blood pressure?", "No, X did not lower it (PUBMED:1).") == "no"
    assert llm.calls == 0


def test_an_answer_without_an_opening_stance_is_read_by_the_model(llm: CountingLLM) -> None:
    # The fake model reads a negated answer as no, any other as yes.
    assert answer_model_stance(llm, "Does X lower blood pressure?", "X did not lower it (PUBMED:1).") == "no"
    assert answer_model_stance(llm, "Does X lower blood pressure?", "X lowered it by 5 mmHg (PUBMED:1).") == "yes"
    assert llm.calls == 2


def test_an_empty_answer_has_no_stance_and_costs_no_call(llm: CountingLLM) -> None:
    assert answer_model_stance(llm, "Does X lower blood pressure?", "  ") is None
    assert llm.calls == 0
