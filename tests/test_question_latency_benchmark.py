"""The question-latency benchmark's variants reach the questions they ask: each variant's settings are set on the
settings tree (`settings.VERIMED`), which a question's stored settings come from, and each names its server's tuning.
No model is served and no question is answered here."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from django.conf import settings

from webapp.qa.pipeline import PipelineSettings

# Loaded by path: an installed dependency ships a top-level `benchmarks` package that shadows the folder.
_SPEC = importlib.util.spec_from_file_location(
    "question_latency_benchmark", Path(__file__).parents[1] / "benchmarks" / "question_latency.py"
)
assert _SPEC is not None
assert _SPEC.loader is not None
latency = sys.modules["question_latency_benchmark"] = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(latency)

URL = "http://127.0.0.1:9/v1"


@pytest.mark.parametrize("name", sorted(latency.VARIANTS))
def test_every_variants_settings_reach_the_settings_tree(name: str) -> None:
    variant = latency.VARIANTS[name]

    config = variant.config(settings.VERIMED, base_url=URL, model="qwen2.5-coder-0.5b-instruct")

    for variable, value in variant.settings.items():
        assert config.value(variable) == value, variable
    assert (config.llm.base_url, config.llm.model) == (URL, "qwen2.5-coder-0.5b-instruct")


@pytest.mark.django_db
def test_a_question_asked_under_a_variant_stores_its_settings_not_the_defaults() -> None:
    """The variants once set flat VERIMED_* Django settings, which nothing reads: every variant ran the defaults."""
    variant = latency.VARIANTS["first-wave"]
    assert settings.VERIMED.generation.abstracts_in_prompt != 10  # else this would prove nothing

    question = latency.question_under("Does everolimus inhibit mTORC1?", variant, URL, "m", enqueue=False)

    stored = PipelineSettings.model_validate(question.settings)
    assert stored.generation.prompt_style == "chat"
    assert stored.generation.abstracts_in_prompt == 10
    assert stored.generation.sentences_per_abstract == 4
    assert (stored.llm_base_url, stored.llm_model) == (URL, "m")


@pytest.mark.django_db
def test_the_prompt_lookup_variant_serves_and_records_prompt_lookup() -> None:
    variant = latency.VARIANTS["prompt-lookup"]

    question = latency.question_under("Does everolimus inhibit mTORC1?", variant, URL, "m", enqueue=False)

    assert variant.tuning.prompt_lookup_tokens > 0
    stored = PipelineSettings.model_validate(question.settings)
    assert stored.generation.prompt_lookup_tokens == variant.tuning.prompt_lookup_tokens
    assert "--prompt-lookup-tokens" in variant.tuning.argv()
    # The defaults it is compared with keep prompt lookup off.
    assert latency.VARIANTS["current"].tuning.prompt_lookup_tokens == 0


def test_the_prompt_cache_variant_keeps_states_and_the_defaults_do_not() -> None:
    assert latency.VARIANTS["prompt-cache"].tuning.prompt_cache_mb > 0
    assert "--prompt-cache-mb" in latency.VARIANTS["prompt-cache"].tuning.argv()
    assert latency.VARIANTS["current"].tuning.prompt_cache_mb == 0


def test_the_fixed_part_is_the_turns_before_the_questions_own_and_verifai_has_none() -> None:
    from generator.answer import answer_prompt
    from generator.base import LLMSettings
    from generator.fake_llm import FakeTokenCounter

    endpoint = LLMSettings(base_url="", model="m", server_kind="fake")
    config = settings.VERIMED
    generation = config.generation
    whole = answer_prompt(generation.prompt_style, "", [], abstract_chars=generation.abstract_chars)
    counter = FakeTokenCounter(endpoint)

    fixed = latency.fixed_prefix_tokens(config, endpoint)

    assert 0 < fixed < counter.count(whole.countable_text()) + whole.template_overhead_tokens
    assert latency.fixed_prefix_tokens(config.replace(VERIMED_PROMPT_STYLE="verifai"), endpoint) == 0
