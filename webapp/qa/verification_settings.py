"""The settings an answer's sentences are verified with: which classifier, which checkpoint, what it reads.

A field with a `variable` is also a setting of the site, read from that environment variable (webapp/config.py); its
description is its line in docs/configuration.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, Field

from generator.generation_settings import site_setting

_MODELS = Path(__file__).resolve().parent.parent.parent / "verifier" / "models"


def comma_separated(value: object) -> object:
    # As django-environ's env.list: split on commas and drop empty items, without stripping spaces.
    return [item for item in value.split(",") if item] if isinstance(value, str) else value


class VerificationSettings(BaseModel, frozen=True):
    verifier: Literal["cross-encoder", "llm-judge", "fake"] = site_setting(
        "cross-encoder",
        "VERIMED_VERIFIER",
        "`cross-encoder` (the trained checkpoint) or `llm-judge` (the few-shot LLM); `fake` (word overlap) is for fast "
        "tests only",
    )
    verifier_model: str = site_setting(
        str(_MODELS / "verimed-mpnet-product-verifier"),
        "VERIMED_VERIFIER_MODEL",
        "any HF sequence-classification checkpoint, path or hub id",
    )
    verifier_labels: Annotated[list[str], BeforeValidator(comma_separated)] = site_setting(
        [],
        "VERIMED_VERIFIER_LABELS",
        "its output order when the config says `LABEL_0..2`, comma-separated; the thesis's "
        "`MilosKosRad/TextualEntailment_DeBERTa_preprocessedSciFACT` needs `NO_EVIDENCE,SUPPORT,CONTRADICT`; "
        "empty: from the checkpoint",
    )
    input: Literal["evidence", "abstract"] = site_setting(
        "evidence",
        "VERIMED_VERIFIER_INPUT",
        "`evidence` (title + top 3 sentences) or `abstract` (title + whole abstract)",
    )
    evidence_sentences: int = Field(3, ge=1, le=10, description="Evidence sentences the verifier reads per citation.")
    max_length: int = Field(256, ge=32, le=4096, description="Tokens the cross-encoder reads per pair.")
    verifier_precision: Literal["fp32", "bf16", "auto"] = site_setting(
        "auto",
        "VERIMED_VERIFIER_PRECISION",
        "the cross-encoder's arithmetic: `fp32`, `bf16` (autocast: 3.8x the pairs a second for mpnet on an "
        "AVX512-BF16 CPU; emulated, and not measured, on others) or `auto` (bf16 where the CPU has AVX512-BF16 or AMX)",
    )
    evidence_model: str = site_setting(
        str(_MODELS / "verimed-evidence-late-fusion"),
        "VERIMED_EVIDENCE_MODEL",
        "the LateFusion tagger; a missing folder falls back to BM25 + cosine ranking",
    )
    evidence_finder: Literal["auto", "late-fusion", "ranked", "fake"] = site_setting(
        "auto",
        "VERIMED_EVIDENCE_FINDER",
        "`auto` (the tagger above when its folder holds one, else `ranked`), `late-fusion`, `ranked` "
        "(BM25 + cosine) or `fake` (word overlap, for fast tests only)",
    )
