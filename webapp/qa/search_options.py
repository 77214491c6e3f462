"""The search settings a researcher may pick on the ask page, and how a question's stored settings read back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from indexer.hybrid import Fusion


@dataclass(frozen=True)
class FusionPreset:
    key: str
    label: str
    fusion: Fusion
    lexical_weight: float
    semantic_weight: float


# Free weights invite settings nobody evaluated; these four are the ones the retrieval benchmark compares.
FUSION_PRESETS: Final = (
    FusionPreset("verifai", "Lexical-leaning 0.7/0.3 (VerifAI)", "weighted", 0.7, 0.3),
    FusionPreset("balanced", "Balanced 0.5/0.5", "weighted", 0.5, 0.5),
    FusionPreset("semantic", "Semantic-leaning 0.3/0.7", "weighted", 0.3, 0.7),
    # Equal weights make the weighted reciprocal-rank sum plain RRF.
    FusionPreset("rrf", "Rank fusion (RRF)", "rrf", 0.5, 0.5),
)
DEFAULT_PRESET: Final = "verifai"
PRESETS_BY_KEY: Final = {preset.key: preset for preset in FUSION_PRESETS}

MODES: Final = (
    ("hybrid", "Hybrid (BM25 + dense vectors)"),
    ("lexical", "Lexical only (BM25)"),
    ("semantic", "Semantic only (dense vectors)"),
)
RERANK_ON: Final = "on"
RERANK_OFF: Final = "off"
RERANK_CHOICES: Final = ((RERANK_ON, "Rerank the top candidates"), (RERANK_OFF, "Keep the fusion's order"))
TOP_K_CHOICES: Final = (5, 10, 15, 20)
# Where a question searched, when not PubMed alone (the default, which the summary leaves unsaid).
SOURCES_SHOWN: Final = {"library": "In my library", "both": "In PubMed and my library"}
DEFAULT_TOP_K: Final = 10
# What a question's retrieved sources are called: a library's are pages of the papers uploaded, not abstracts.
SOURCE_UNITS: Final = {"pubmed": "abstracts", "library": "pages", "both": "abstracts and pages"}


def library_only(settings: dict[str, Any]) -> bool:
    """The question searched the asker's own library alone: nothing of PubMed, so nothing of its vector index."""
    return (settings.get("filters") or {}).get("sources") == "library"


def preset_for(retrieval: dict[str, Any]) -> FusionPreset | None:
    """The preset a stored retrieval setting matches, if any (settings made elsewhere may match none)."""
    for preset in FUSION_PRESETS:
        if (
            retrieval.get("fusion") == preset.fusion
            and retrieval.get("lexical_weight") == preset.lexical_weight
            and retrieval.get("semantic_weight") == preset.semantic_weight
        ):
            return preset
    return None


def _fusion_text(retrieval: dict[str, Any]) -> str:
    preset = preset_for(retrieval)
    if preset is not None:
        return preset.label
    fusion = retrieval.get("fusion", "weighted")
    return f"{fusion} {retrieval.get('lexical_weight')}/{retrieval.get('semantic_weight')}"


def search_summary(settings: dict[str, Any]) -> str:
    """One line saying how a question searched, from the settings stored with it."""
    retrieval = settings.get("retrieval") or {}
    filters = settings.get("filters") or {}
    if not retrieval:
        return ""
    mode = retrieval.get("mode", "hybrid")
    searched = dict(MODES).get(mode, mode) + (f", {_fusion_text(retrieval)}" if mode == "hybrid" else "")
    scope = SOURCES_SHOWN.get(filters.get("sources", "pubmed"))
    parts = [scope, searched] if scope else [searched]
    if retrieval.get("expand_query") and mode != "semantic":
        parts.append("query expanded from the first results")
    if retrieval.get("rerank"):
        parts.append(f"reranked (top {retrieval.get('rerank_candidates')})")
    units = SOURCE_UNITS.get(filters.get("sources", "pubmed"), "abstracts")
    parts.append(f"{retrieval.get('top_k', DEFAULT_TOP_K)} {units}")
    year_from, year_to = filters.get("year_from"), filters.get("year_to")
    if year_from or year_to:
        parts.append(f"years {year_from or '…'}\u2013{year_to or '…'}")
    for key, label in (("journals", "journals"), ("publication_types", "types"), ("mesh", "MeSH")):
        values = filters.get(key) or []
        if values:
            parts.append(f"{label}: {', '.join(values)}")
    if filters.get("include_retracted"):
        parts.append("retracted papers included")
    if filters.get("prefer_stronger_designs"):
        parts.append("stronger designs first")
    return " · ".join(parts)
