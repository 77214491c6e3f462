"""The settings one answer is made with, as a typed object; every question stores a copy of them."""

from __future__ import annotations

from django.conf import settings
from pydantic import BaseModel, Field

from indexer.hybrid import HybridSettings


class GenerationSettings(BaseModel, frozen=True):
    max_tokens: int = Field(400, ge=16, le=4096, description="Upper bound on answer length in tokens.")
    temperature: float = Field(0.0, ge=0, le=2, description="0 = greedy: the same retrieval gives the same answer.")
    repeat_penalty: float = Field(1.1, ge=1, le=2, description="Discourages loops in small models.")
    sentences_per_abstract: int = Field(
        4, ge=0, le=50, description="Sentences of each abstract the model sees, most relevant first; 0 = all."
    )
    abstract_chars: int = Field(1500, ge=200, description="Hard cap on each abstract's characters in the prompt.")


class VerificationSettings(BaseModel, frozen=True):
    evidence_sentences: int = Field(2, ge=1, le=5, description="Abstract sentences shown to the judge per claim.")


class PipelineSettings(BaseModel, frozen=True):
    retrieval: HybridSettings = HybridSettings()
    generation: GenerationSettings = GenerationSettings()
    verification: VerificationSettings = VerificationSettings()
    llm_model: str = Field(description="Model name served by the OpenAI-compatible endpoint.")
    llm_base_url: str = Field(description="OpenAI-compatible endpoint (llama.cpp here, vLLM in production).")
    embedding_model: str = Field(description="Sentence-transformers model used by the dense leg and evidence.")
    lexical_backend: str
    vector_backend: str


def default_pipeline_settings() -> PipelineSettings:
    return PipelineSettings(
        llm_model=settings.VERIMED_LLM_MODEL,
        llm_base_url=settings.VERIMED_LLM_BASE_URL,
        embedding_model=settings.VERIMED_EMBEDDING_MODEL,
        lexical_backend=settings.VERIMED_LEXICAL_BACKEND,
        vector_backend=settings.VERIMED_VECTOR_BACKEND,
    )
