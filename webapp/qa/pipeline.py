"""The settings one answer is made with, as a typed object; every question stores a copy of them."""

from __future__ import annotations

from typing import Literal

from django.conf import settings
from pydantic import BaseModel, Field, model_validator

from generator.base import ServerKind
from generator.generation_settings import GenerationSettings
from indexer.base import SearchFilters
from indexer.hybrid import HybridSettings


class VerificationSettings(BaseModel, frozen=True):
    verifier: Literal["cross-encoder", "llm-judge", "fake"] = Field(
        "cross-encoder", description="The trained cross-encoder, or the few-shot LLM judge (fake: fast tests only)."
    )
    verifier_model: str = Field("", description="The cross-encoder checkpoint (path or hub id).")
    verifier_labels: list[str] = Field(default_factory=list, description="Its output order, when not in its config.")
    input: Literal["evidence", "abstract"] = Field(
        "evidence", description="The claim against the title + top evidence sentences, or + the whole abstract."
    )
    evidence_sentences: int = Field(3, ge=1, le=10, description="Evidence sentences the verifier reads per citation.")
    max_length: int = Field(256, ge=32, le=4096, description="Tokens the cross-encoder reads per pair.")
    evidence_model: str = Field("", description="The trained evidence tagger's folder; empty: BM25 + cosine ranking.")
    evidence_finder: Literal["auto", "late-fusion", "ranked", "fake"] = Field(
        "auto", description="auto: the tagger when evidence_model holds one, else ranked (fake: fast tests only)."
    )


class RetrievalFilters(BaseModel, frozen=True):
    year_from: int | None = Field(None, ge=1800, le=2100, description="Earliest publication year, inclusive.")
    year_to: int | None = Field(None, ge=1800, le=2100, description="Latest publication year, inclusive.")
    journals: tuple[str, ...] = Field((), description="Journal titles as PubMed spells them (any of).")
    publication_types: tuple[str, ...] = Field((), description="PubMed publication types (any of).")
    mesh: tuple[str, ...] = Field((), description="MeSH descriptor names (any of).")

    @model_validator(mode="after")
    def _years_in_order(self) -> RetrievalFilters:
        if self.year_from is not None and self.year_to is not None and self.year_from > self.year_to:
            raise ValueError("year_from is after year_to")
        return self

    def search_filters(self) -> SearchFilters:
        return SearchFilters(**self.model_dump())


class PipelineSettings(BaseModel, frozen=True):
    retrieval: HybridSettings = HybridSettings()
    filters: RetrievalFilters = RetrievalFilters()
    generation: GenerationSettings = GenerationSettings()
    verification: VerificationSettings = VerificationSettings()
    llm_model: str = Field(description="Model name served by the OpenAI-compatible endpoint.")
    llm_base_url: str = Field(description="OpenAI-compatible endpoint (llama.cpp here, vLLM in production).")
    llm_server_kind: ServerKind = Field(
        "llama.cpp", description="llama.cpp or vllm (they name a few options differently); fake: for fast tests only."
    )
    embedding_model: str = Field(description="Sentence-transformers model used by the dense leg and evidence.")
    lexical_backend: str
    vector_backend: str


def default_pipeline_settings() -> PipelineSettings:
    return PipelineSettings(
        generation=GenerationSettings(
            prompt_style=settings.VERIMED_PROMPT_STYLE,
            max_tokens=settings.VERIMED_LLM_MAX_TOKENS,
            temperature=settings.VERIMED_LLM_TEMPERATURE,
            repeat_penalty=settings.VERIMED_LLM_REPETITION_PENALTY,
            context_tokens=settings.VERIMED_LLM_CONTEXT_TOKENS,
        ),
        verification=VerificationSettings(
            verifier=settings.VERIMED_VERIFIER,
            verifier_model=str(settings.VERIMED_VERIFIER_MODEL),
            verifier_labels=list(settings.VERIMED_VERIFIER_LABELS),
            input=settings.VERIMED_VERIFIER_INPUT,
            evidence_model=str(settings.VERIMED_EVIDENCE_MODEL),
            evidence_finder=settings.VERIMED_EVIDENCE_FINDER,
        ),
        llm_model=settings.VERIMED_LLM_MODEL,
        llm_base_url=settings.VERIMED_LLM_BASE_URL,
        llm_server_kind=settings.VERIMED_LLM_SERVER_KIND,
        embedding_model=settings.VERIMED_EMBEDDING_MODEL,
        lexical_backend=settings.VERIMED_LEXICAL_BACKEND,
        vector_backend=settings.VERIMED_VECTOR_BACKEND,
    )
