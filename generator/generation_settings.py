"""The settings an answer is generated with: prompt, sampling, and how much of each abstract the model sees."""

from __future__ import annotations

from pydantic import BaseModel, Field

from generator.answer import PromptStyle
from generator.base import SamplingOptions


class GenerationSettings(BaseModel, frozen=True):
    # chat-complete wrote fuller answers that cited the question's own abstract more often (measured beside its
    # wording in generator/prompts.py).
    prompt_style: PromptStyle = Field(
        "chat-complete",
        description="chat: messages with a worked example; chat-complete: the same asking for three to six "
        "sentences; verifai: VerifAI's.",
    )
    max_tokens: int = Field(
        1225, ge=16, le=8192, description="Upper bound on answer length in tokens (the thesis's value: 1225)."
    )
    temperature: float = Field(0.0, ge=0, le=2, description="0 = greedy: the same retrieval gives the same answer.")
    repeat_penalty: float = Field(1.1, ge=1, le=2, description="Discourages loops (the thesis used 1.1).")
    context_tokens: int = Field(8192, ge=512, description="The serving model's context window in tokens.")
    sentences_per_abstract: int = Field(
        2, ge=0, le=50, description="Sentences of each abstract the model sees, most relevant first; 0 = all."
    )
    # The best-ranked abstract is the one an answer leans on most: with two sentences of it, the model has too little
    # to write more than one or two findings from it, and padded longer answers with unrelated abstracts.
    lead_abstract_sentences: int = Field(
        0,
        ge=0,
        le=50,
        description="Sentences of the best-ranked abstract the model sees (more than the others get); 0 = as many as "
        "sentences_per_abstract.",
    )
    # Five abstracts of two sentences: a third of the first wave's ten of four, the prompt most of the wait for the
    # first word; on 20 PubMedQA questions the model cited the question's own abstract more often with it (90%
    # against 85%; benchmarks/README.md).
    abstracts_in_prompt: int = Field(
        5, ge=0, le=100, description="The best-ranked retrieved abstracts the model reads; 0 = all retrieved."
    )
    abstract_chars: int = Field(1500, ge=200, description="Hard cap on each abstract's characters in the prompt.")

    def sampling(self) -> SamplingOptions:
        return SamplingOptions(
            max_tokens=self.max_tokens, temperature=self.temperature, repetition_penalty=self.repeat_penalty
        )
