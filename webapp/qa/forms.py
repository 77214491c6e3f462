"""The ask page's search settings: what a researcher may change about retrieval, checked before anything is stored."""

from __future__ import annotations

from typing import Any

from django import forms
from pydantic import ValidationError

from indexer.hybrid import HybridSettings
from webapp.qa.pipeline import RetrievalFilters, default_pipeline_settings
from webapp.qa.search_options import (
    DEFAULT_PRESET,
    DEFAULT_TOP_K,
    FUSION_PRESETS,
    MODES,
    PRESETS_BY_KEY,
    RERANK_CHOICES,
    RERANK_OFF,
    RERANK_ON,
    TOP_K_CHOICES,
)
from webapp.qa.selectors import article_filter_choices

MAX_MESH_TERMS = 20
YEAR_MIN, YEAR_MAX = 1800, 2100


class SearchSettingsForm(forms.Form):
    # Set by clean() once every field is valid: what `question_create` receives.
    retrieval_settings: HybridSettings
    filter_settings: RetrievalFilters

    # Every field is optional: a form posted without them (a script, an old page) asks with the site's defaults.
    mode = forms.ChoiceField(label="Search mode", choices=MODES, required=False, widget=forms.RadioSelect)
    fusion = forms.ChoiceField(
        label="Fusion (hybrid mode)",
        choices=[(preset.key, preset.label) for preset in FUSION_PRESETS],
        required=False,
        help_text="How the BM25 and dense scores are combined.",
    )
    top_k = forms.TypedChoiceField(
        label="Abstracts to retrieve",
        choices=[(str(k), str(k)) for k in TOP_K_CHOICES],
        coerce=int,
        empty_value=None,
        required=False,
    )
    rerank = forms.ChoiceField(
        label="Rerank",
        choices=RERANK_CHOICES,
        required=False,
        widget=forms.RadioSelect,
        help_text="A model trained here on BioASQ reads the top 10 candidates again and reorders them. Off by "
        "default: on BioASQ's dev questions it ranked worse than the search alone, and it adds about 1.5 s a "
        "question on a two-core CPU.",
    )
    year_from = forms.IntegerField(
        label="Published from (year)", min_value=YEAR_MIN, max_value=YEAR_MAX, required=False
    )
    year_to = forms.IntegerField(label="Published to (year)", min_value=YEAR_MIN, max_value=YEAR_MAX, required=False)
    journals = forms.MultipleChoiceField(
        label="Journals",
        required=False,
        help_text="Any of the selected; the most frequent journals in the index come first.",
        widget=forms.SelectMultiple(attrs={"size": 6}),
    )
    publication_types = forms.MultipleChoiceField(
        label="Publication types",
        required=False,
        help_text="Any of the selected.",
        widget=forms.SelectMultiple(attrs={"size": 6}),
    )
    mesh = forms.CharField(
        label="MeSH terms",
        required=False,
        max_length=2000,
        help_text="Descriptor names separated by semicolons, e.g. Diabetes Mellitus, Type 2; Metformin.",
    )
    sources = forms.ChoiceField(
        label="Search in",
        choices=[("pubmed", "PubMed"), ("library", "My library"), ("both", "PubMed and my library")],
        required=False,
        widget=forms.RadioSelect,
        help_text="Your library: the papers you uploaded, which only you can search; an answer cites their pages "
        "as DOC:<id>:p<page>. The year, journal, type and MeSH filters apply to PubMed only.",
    )
    include_retracted = forms.BooleanField(
        label="Include retracted papers",
        required=False,
        help_text="Retracted papers are left out unless this is ticked; when included they are marked Retracted.",
    )
    prefer_stronger_designs = forms.BooleanField(
        label="Prefer stronger study designs",
        required=False,
        help_text="Puts meta-analyses, systematic reviews and trials before weaker designs among the abstracts "
        "found (the search order stands within a design). Untested: no shared benchmark carries publication types "
        "to measure it on.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        present = article_filter_choices()
        for name, values in (("journals", present.journals), ("publication_types", present.publication_types)):
            field = self.fields[name]
            assert isinstance(field, forms.MultipleChoiceField)
            field.choices = [(value, f"{value} ({count:,})") for value, count in values]
        defaults = default_pipeline_settings().retrieval
        self.fields["mode"].initial = defaults.mode
        self.fields["top_k"].initial = str(defaults.top_k if defaults.top_k in TOP_K_CHOICES else DEFAULT_TOP_K)
        self.fields["fusion"].initial = DEFAULT_PRESET
        self.fields["rerank"].initial = RERANK_ON if defaults.rerank else RERANK_OFF
        self.fields["sources"].initial = "pubmed"

    def clean_mesh(self) -> tuple[str, ...]:
        # Semicolons, not commas: MeSH names themselves contain commas ("Diabetes Mellitus, Type 2").
        terms = tuple(dict.fromkeys(term.strip() for term in self.cleaned_data["mesh"].split(";") if term.strip()))
        if len(terms) > MAX_MESH_TERMS:
            raise forms.ValidationError(f"At most {MAX_MESH_TERMS} MeSH terms; you gave {len(terms)}.")
        return terms

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        year_from, year_to = cleaned.get("year_from"), cleaned.get("year_to")
        if year_from is not None and year_to is not None and year_from > year_to:
            self.add_error("year_to", f"The end year ({year_to}) is before the start year ({year_from}).")
        if not self.errors:
            try:
                self.retrieval_settings = self._retrieval(cleaned)
                self.filter_settings = self._filters(cleaned)
            except ValidationError as exc:  # the fields above refuse what the models refuse; this is a backstop
                self.add_error(None, "; ".join(error["msg"] for error in exc.errors()))
        return cleaned

    @staticmethod
    def _retrieval(data: dict[str, Any]) -> HybridSettings:
        """The site's retrieval defaults with the researcher's choices on top (rrf_k, candidates stay the site's)."""
        preset = PRESETS_BY_KEY[data.get("fusion") or DEFAULT_PRESET]
        defaults = default_pipeline_settings().retrieval
        return HybridSettings.model_validate(
            {
                **defaults.model_dump(),
                "mode": data.get("mode") or defaults.mode,
                "top_k": data.get("top_k") or defaults.top_k,
                "fusion": preset.fusion,
                "lexical_weight": preset.lexical_weight,
                "semantic_weight": preset.semantic_weight,
                "rerank": defaults.rerank if not data.get("rerank") else data["rerank"] == RERANK_ON,
            }
        )

    @staticmethod
    def _filters(data: dict[str, Any]) -> RetrievalFilters:
        return RetrievalFilters(
            year_from=data.get("year_from"),
            year_to=data.get("year_to"),
            journals=tuple(data.get("journals") or ()),
            publication_types=tuple(data.get("publication_types") or ()),
            mesh=data.get("mesh") or (),
            sources=data.get("sources") or "pubmed",
            include_retracted=bool(data.get("include_retracted")),
            prefer_stronger_designs=bool(data.get("prefer_stronger_designs")),
        )
