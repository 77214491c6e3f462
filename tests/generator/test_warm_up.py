"""Tests for warming the answer prompt's constant prefix: what is sent, and that it is what every answer starts with."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from generator.answer import ContextAbstract, PromptStyle, answer_prompt
from generator.base import Message, SamplingOptions
from generator.warm_up import warm_prompt_prefix


class RecordingLLM:
    """Records the requests warm_prompt_prefix makes (the LLM is not what is under test here)."""

    model_id = "recording"

    def __init__(self) -> None:
        self.chats: list[tuple[list[Message], SamplingOptions]] = []

    def stream_chat(self, messages: list[Message], options: SamplingOptions) -> Iterator[str]:
        self.chats.append((messages, options))
        yield "x"

    def stream_completion(self, prompt: str, options: SamplingOptions) -> Iterator[str]:
        raise AssertionError("the warm-up sends chat messages only")

    def complete_chat(self, messages: list[Message], *, max_tokens: int, temperature: float = 0.0) -> str:
        raise AssertionError("the warm-up streams")


@pytest.mark.parametrize("style", ["chat", "chat-complete"])
def test_the_warm_up_sends_the_constant_prefix_of_every_answer_for_one_token(style: PromptStyle) -> None:
    llm = RecordingLLM()

    assert warm_prompt_prefix(llm, style, abstract_chars=900)

    [(messages, options)] = llm.chats
    real = answer_prompt(style, "Does warfarin prevent stroke?", [ContextAbstract("1", "T.", "A.")], abstract_chars=900)
    assert messages[:3] == list(real.messages[:3])
    assert messages[3]["content"].startswith("Abstracts:\n")
    assert real.messages[3]["content"].startswith("Abstracts:\n")
    assert options.max_tokens == 1


def test_the_verifai_prompt_has_no_constant_prefix_and_sends_nothing() -> None:
    llm = RecordingLLM()

    assert not warm_prompt_prefix(llm, "verifai", abstract_chars=900)
    assert llm.chats == []
