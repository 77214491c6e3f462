"""The settings an answer is generated with: prompt, sampling, and how much of each abstract the model sees."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from generator.answer import PromptStyle
from generator.base import SamplingOptions


def site_setting(default: Any, variable: str, description: str, **limits: Any) -> Any:
    """A field that is also a setting of the site: read from `variable` by the site (webapp/config.py), described by its
    line in docs/configuration.md. The library itself only ever reads the field."""
    return Field(default, description=description, json_schema_extra={"variable": variable}, **limits)


class GenerationSettings(BaseModel, frozen=True):
    # chat-complete wrote fuller answers that cited the question's own abstract more often (measured beside its
    # wording in generator/prompts.py).
    prompt_style: PromptStyle = site_setting(
        "chat-complete",
        "VERIMED_PROMPT_STYLE",
        "`chat`, `chat-complete` (asks for three to six sentences) or `verifai` (VerifAI's fine-tuned "
        "Mistral; docker-compose sets it)",
    )
    # 1225: the thesis's value.
    max_tokens: int = site_setting(
        1225, "VERIMED_LLM_MAX_TOKENS", "upper bound on an answer's length in tokens", ge=16, le=8192
    )
    temperature: float = site_setting(
        0.0,
        "VERIMED_LLM_TEMPERATURE",
        "sampling temperature; 0 = greedy: the same retrieval gives the same answer",
        ge=0,
        le=2,
    )
    repeat_penalty: float = site_setting(
        1.1, "VERIMED_LLM_REPETITION_PENALTY", "discourages loops (the thesis used 1.1)", ge=1, le=2
    )
    context_tokens: int = site_setting(
        8192,
        "VERIMED_LLM_CONTEXT_TOKENS",
        "the served model's context window; `stack start` serves llama.cpp with it",
        ge=512,
    )
    # Answers copy phrases from their abstracts, which prompt-lookup decoding writes several tokens a step; greedy
    # decoding keeps the same tokens. A setting of the server, stored with each answer like its context window.
    prompt_lookup_tokens: int = site_setting(
        0,
        "VERIMED_LLM_PROMPT_LOOKUP_TOKENS",
        "tokens llama.cpp's prompt-lookup decoding guesses ahead from the prompt and checks in one step (0 = off); "
        "`stack start` serves llama.cpp with it, keeping every token's logits, which it needs",
        ge=0,
        le=64,
    )
    sentences_per_abstract: int = site_setting(
        2,
        "VERIMED_SENTENCES_PER_ABSTRACT",
        "sentences of each abstract the model reads, most relevant to the question first; 0 = all",
        ge=0,
        le=50,
    )
    # The best-ranked abstract is the one an answer leans on most: with two sentences of it, the model has too little
    # to write more than one or two findings from it, and padded longer answers with unrelated abstracts.
    lead_abstract_sentences: int = site_setting(
        0,
        "VERIMED_LEAD_ABSTRACT_SENTENCES",
        "sentences of the best-ranked abstract the model reads, more than the others get; 0 = as many as the others",
        ge=0,
        le=50,
    )
    # Five abstracts of two sentences: a third of the first wave's ten of four, the prompt most of the wait for the
    # first word; on 20 PubMedQA questions the model cited the question's own abstract more often with it (90%
    # against 85%; benchmarks/HISTORY.md).
    abstracts_in_prompt: int = site_setting(
        5,
        "VERIMED_ABSTRACTS_IN_PROMPT",
        "the best-ranked retrieved abstracts the model reads (the rest stay listed as sources); 0 = all",
        ge=0,
        le=100,
    )
    # The 1.5B model answers "Yes" to nearly every yes/no question on its own; told the bottom line first, its answer
    # opens with it. The cost is the bottom line's reading before the first token (benchmarks/HISTORY.md).
    bottom_line_first: bool = site_setting(
        True,
        "VERIMED_BOTTOM_LINE_FIRST",
        "decide a yes/no question's bottom line before its answer and ask the answer to open with it; "
        "false = after the answer, as before",
    )
    abstract_chars: int = Field(1500, ge=200, description="Hard cap on each abstract's characters in the prompt.")

    def sampling(self) -> SamplingOptions:
        return SamplingOptions(
            max_tokens=self.max_tokens, temperature=self.temperature, repetition_penalty=self.repeat_penalty
        )
