"""The configured language model client."""

from __future__ import annotations

from django.conf import settings

from generator.llm import LLMSettings, OpenAICompatibleLLM
from webapp.qa.pipeline import PipelineSettings


def llm_for(pipeline: PipelineSettings) -> OpenAICompatibleLLM:
    return OpenAICompatibleLLM(
        LLMSettings(
            base_url=pipeline.llm_base_url,
            model=pipeline.llm_model,
            api_key=settings.VERIMED_LLM_API_KEY,
            timeout_seconds=settings.VERIMED_LLM_TIMEOUT_SECONDS,
        )
    )
