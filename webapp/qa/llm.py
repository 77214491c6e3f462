"""The configured language model client and the tokenizer of the model it serves, as generator.registry builds them."""

from __future__ import annotations

from django.conf import settings

from generator.base import LLM, LLMSettings, TokenCounter
from generator.registry import build_llm, build_token_counter
from webapp.qa.pipeline import PipelineSettings


def llm_settings_for(pipeline: PipelineSettings) -> LLMSettings:
    return LLMSettings(
        base_url=pipeline.llm_base_url,
        model=pipeline.llm_model,
        api_key=settings.VERIMED_LLM_API_KEY,
        timeout_seconds=settings.VERIMED_LLM_TIMEOUT_SECONDS,
        max_retries=settings.VERIMED_LLM_MAX_RETRIES,
        server_kind=pipeline.llm_server_kind,
    )


def llm_for(pipeline: PipelineSettings) -> LLM:
    return build_llm(llm_settings_for(pipeline))


def token_counter_for(pipeline: PipelineSettings) -> TokenCounter:
    return build_token_counter(llm_settings_for(pipeline))
