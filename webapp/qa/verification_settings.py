"""The settings an answer's sentences are verified with: which classifier, which checkpoint, what it reads."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


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
