"""Prompt-lookup decoding against the real llama.cpp server: a speed-up that must not change a word of the answer."""

from __future__ import annotations

from dataclasses import replace

import pytest
from django.conf import settings

from generator.answer import answer_prompt
from generator.base import LLMSettings, SamplingOptions
from generator.generate import generate_answer
from generator.llm import OpenAICompatibleLLM
from generator.serve import ServerTuning, served_model
from tests.generator.everolimus import ABSTRACTS, GIVEN, QUESTION
from tests.support import TEST_LLM_MODEL

pytestmark = pytest.mark.model

# One thread, beside whatever else the machine runs; batches of 64, so that the prompt is read in several and the
# logits table llama-cpp-python keeps for a draft model must hold more than one.
TUNING = ServerTuning(threads=1, batch=64)


def _answer(tuning: ServerTuning) -> str:
    with served_model(TEST_LLM_MODEL, cache=settings.VERIMED.paths.model_cache, n_ctx=2048, tuning=tuning) as url:
        llm = OpenAICompatibleLLM(LLMSettings(base_url=url, model=TEST_LLM_MODEL, timeout_seconds=300))
        prompt = answer_prompt("chat-complete", QUESTION, ABSTRACTS, abstract_chars=1500)
        # The product's sampling: greedy, with its repetition penalty.
        sampling = SamplingOptions(max_tokens=80, temperature=0.0, repetition_penalty=1.1)
        return generate_answer(llm, prompt, sampling, given_pmids=GIVEN).raw_text


def test_greedy_answers_are_the_same_with_prompt_lookup_as_without() -> None:
    plain = _answer(TUNING)
    looked_up = _answer(replace(TUNING, prompt_lookup_tokens=10))

    assert plain
    assert looked_up == plain
