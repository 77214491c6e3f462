"""The settings one answer is made with, as a typed object; every question stores a copy of them.

`default_pipeline_settings()` builds them from the site's settings tree (`settings.VERIMED`, webapp/config.py), whose
generation and verification groups are the pipeline's own objects, validated once, at start-up (or where a test
replaces a value).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Literal

from django.conf import settings
from pydantic import BaseModel, Field, ValidationError, model_validator

from generator.base import ServerKind
from generator.generation_settings import GenerationSettings
from indexer.base import SearchFilters
from indexer.hybrid import HybridSettings
from webapp.qa.models import Question
from webapp.qa.verification_settings import VerificationSettings

Sources = Literal["pubmed", "library", "both"]


class RetrievalFilters(BaseModel, frozen=True):
    year_from: int | None = Field(None, ge=1800, le=2100, description="Earliest publication year, inclusive.")
    year_to: int | None = Field(None, ge=1800, le=2100, description="Latest publication year, inclusive.")
    journals: tuple[str, ...] = Field((), description="Journal titles as PubMed spells them (any of).")
    publication_types: tuple[str, ...] = Field((), description="PubMed publication types (any of).")
    mesh: tuple[str, ...] = Field((), description="MeSH descriptor names (any of).")
    # Applied to the fused results, not inside the legs: the indexes carry neither retraction status nor design.
    include_retracted: bool = Field(
        False, description="Keep retracted papers among the sources (marked as retracted); left out by default."
    )
    sources: Sources = Field(
        "pubmed",
        description="Where to search: PubMed, the asker's own library of uploaded papers (cited as "
        "DOC:<id>:p<page>), or both. The year, journal, type and MeSH filters apply to PubMed only.",
    )
    prefer_stronger_designs: bool = Field(
        False,
        description="Order the retrieved abstracts by study design (meta-analyses and trials first, keeping the "
        "search order within a design). Off by default: no shared benchmark carries publication types to measure "
        "what it does to answers.",
    )

    @model_validator(mode="after")
    def _years_in_order(self) -> RetrievalFilters:
        if self.year_from is not None and self.year_to is not None and self.year_from > self.year_to:
            raise ValueError("year_from is after year_to")
        return self

    def search_filters(self) -> SearchFilters:
        return SearchFilters(**self.model_dump(exclude={"include_retracted", "prefer_stronger_designs", "sources"}))


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
    config = settings.VERIMED
    return PipelineSettings(
        generation=config.generation,
        verification=config.verification,
        llm_model=config.llm.model,
        llm_base_url=config.llm.base_url,
        llm_server_kind=config.llm.server_kind,
        embedding_model=config.engines.embedding_model,
        lexical_backend=config.engines.lexical_backend,
        vector_backend=config.engines.vector_backend,
    )


# The parts of the settings a stored answer is read again with as the site runs them today (pipeline_rereading).
SITE_VERIFIER = frozenset({"verification"})
SITE_LANGUAGE_MODEL = frozenset({"llm_model", "llm_base_url", "llm_server_kind"})


def stored_pipeline(question: Question) -> PipelineSettings:
    """The settings the question was answered with; the site's own where none valid were stored (rows made by hand,
    or settings whose fields have changed since)."""
    try:
        return PipelineSettings.model_validate(question.settings)
    except ValidationError:
        return default_pipeline_settings()


def pipeline_rereading(question: Question, *, site_parts: Collection[str]) -> PipelineSettings:
    """What reading the question's answer again today runs with: its stored settings (its search above all), with
    the parts named in `site_parts` (SITE_VERIFIER, SITE_LANGUAGE_MODEL) as the site runs them now."""
    site = default_pipeline_settings()
    return stored_pipeline(question).model_copy(update={part: getattr(site, part) for part in site_parts})
