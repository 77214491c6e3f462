"""The configured language model client and the tokenizer of the model it serves."""

from __future__ import annotations

from django.conf import settings

from generator.llm import LLMSettings, OpenAICompatibleLLM, ServerTokenCounter
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


def llm_for(pipeline: PipelineSettings) -> OpenAICompatibleLLM:
    return OpenAICompatibleLLM(llm_settings_for(pipeline))


def token_counter_for(pipeline: PipelineSettings) -> ServerTokenCounter:
    return ServerTokenCounter(llm_settings_for(pipeline))
