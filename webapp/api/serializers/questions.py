"""What the API reads and writes to ask, list and cancel questions. Input rules come from the pipeline's own pydantic
settings (bounds, choices, cross-field checks), so the API, the page and the CLI cannot disagree about what a valid
question is."""

from __future__ import annotations

from typing import Any, get_args

import annotated_types
import pydantic
from django.conf import settings
from rest_framework import serializers

from indexer.hybrid import Fusion, HybridSettings, Mode
from webapp.api.serializers.common import ID_BOUNDS
from webapp.qa.models import Question
from webapp.qa.payloads import PARENT_HELP, THREAD_HELP
from webapp.qa.pipeline import RetrievalFilters

# The API offers a narrower range than the pipeline accepts: enough to compare runs, never a huge prompt.
API_TOP_K = (5, 20)
_RETRIEVAL_FIELDS = ("mode", "top_k", "lexical_weight", "semantic_weight", "fusion", "rerank")
_FILTER_FIELDS = (
    "year_from", "year_to", "journals", "publication_types", "mesh", "include_retracted", "prefer_stronger_designs",
    "sources",
)  # fmt: skip


def _documented(model: type[pydantic.BaseModel], name: str) -> dict[str, Any]:
    """The bounds and description a pydantic field declares, as DRF field arguments (for validation and schema)."""
    field = model.model_fields[name]
    options: dict[str, Any] = {"required": False, "help_text": field.description}
    for rule in field.metadata:
        if isinstance(rule, annotated_types.Ge):
            options["min_value"] = rule.ge
        elif isinstance(rule, annotated_types.Le):
            options["max_value"] = rule.le
    return options


def _field_errors(exc: pydantic.ValidationError, *, whole_model: tuple[str, ...]) -> dict[str, list[str]]:
    """pydantic's errors keyed by the API's field names; a rule over several fields is reported on each of them."""
    errors: dict[str, list[str]] = {}
    for error in exc.errors():
        fields = (str(error["loc"][0]),) if error["loc"] else whole_model
        for field in fields:
            errors.setdefault(field, []).append(error["msg"].removeprefix("Value error, "))
    return errors


class QuestionCreateSerializer(serializers.Serializer):
    # Blank and over-long text are rejected by `question_create`, whose messages the page shows too; its limit is
    # `VERIMED_MAX_QUESTION_CHARS`, the one the ask form's text box has.
    question = serializers.CharField(
        allow_blank=True,
        trim_whitespace=False,
        help_text=f"The question, in English; at most {settings.VERIMED.limits.max_question_chars:,} characters once "
        "surrounding spaces are trimmed.",
    )
    mode = serializers.ChoiceField(choices=get_args(Mode), **_documented(HybridSettings, "mode"))
    top_k = serializers.IntegerField(
        **{**_documented(HybridSettings, "top_k"), "min_value": API_TOP_K[0], "max_value": API_TOP_K[1]}
    )
    lexical_weight = serializers.FloatField(**_documented(HybridSettings, "lexical_weight"))
    semantic_weight = serializers.FloatField(**_documented(HybridSettings, "semantic_weight"))
    fusion = serializers.ChoiceField(choices=get_args(Fusion), **_documented(HybridSettings, "fusion"))
    rerank = serializers.BooleanField(**_documented(HybridSettings, "rerank"))
    year_from = serializers.IntegerField(allow_null=True, **_documented(RetrievalFilters, "year_from"))
    year_to = serializers.IntegerField(allow_null=True, **_documented(RetrievalFilters, "year_to"))
    journals = serializers.ListField(
        child=serializers.CharField(max_length=512), max_length=50, **_documented(RetrievalFilters, "journals")
    )
    publication_types = serializers.ListField(
        child=serializers.CharField(max_length=200), max_length=50, **_documented(RetrievalFilters, "publication_types")
    )
    mesh = serializers.ListField(
        child=serializers.CharField(max_length=200), max_length=50, **_documented(RetrievalFilters, "mesh")
    )
    include_retracted = serializers.BooleanField(**_documented(RetrievalFilters, "include_retracted"))
    prefer_stronger_designs = serializers.BooleanField(**_documented(RetrievalFilters, "prefer_stronger_designs"))
    sources = serializers.ChoiceField(choices=["pubmed", "library", "both"], **_documented(RetrievalFilters, "sources"))
    parent = serializers.IntegerField(
        required=False,
        allow_null=True,
        **ID_BOUNDS,
        help_text="Ask it as a follow-up of this question: one of your own, answered (status done). It joins that "
        "question's thread, searches with its search settings unless others are given, and is given the abstracts "
        "the thread's earlier answers cited besides its own. The API asks `question` as written: write it as a "
        "standalone question (the site's page proposes a rewrite of a follow-up; the API does not).",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        """Adds `retrieval` and `filters` (None where nothing was given, so the site's defaults apply)."""
        retrieval = {name: attrs[name] for name in _RETRIEVAL_FIELDS if name in attrs}
        filters = {name: attrs[name] for name in _FILTER_FIELDS if name in attrs}
        errors: dict[str, list[str]] = {}
        try:
            attrs["retrieval"] = HybridSettings(**retrieval) if retrieval else None
        except pydantic.ValidationError as exc:
            errors |= _field_errors(exc, whole_model=("lexical_weight", "semantic_weight"))
        try:
            attrs["filters"] = RetrievalFilters(**filters) if filters else None
        except pydantic.ValidationError as exc:
            errors |= _field_errors(exc, whole_model=("year_from", "year_to"))
        if errors:
            raise serializers.ValidationError(errors)
        return attrs


class QuestionCreatedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Question.Status.choices)
    url = serializers.URLField(help_text="This question in the API: poll it for status and result.")
    page_url = serializers.URLField(help_text="The question's page on the site.")


class QuestionListQuerySerializer(serializers.Serializer):
    all = serializers.BooleanField(
        default=False, help_text="Reviewers and admins: everyone's questions, not only your own."
    )
    status = serializers.ChoiceField(choices=Question.Status.choices, required=False)
    search = serializers.CharField(required=False, help_text="Words in the question or its answer.")


class QuestionSummarySerializer(serializers.ModelSerializer):
    question = serializers.CharField(source="text")
    status = serializers.ChoiceField(
        source="shown_status",
        choices=Question.Status.choices,
        read_only=True,
        help_text="failed also for a question lost on its way (queued or in a stage, unmoved for "
        "`VERIMED_QUESTION_LOST_MINUTES`); its detail's `error` says so.",
    )
    asked_by = serializers.CharField(source="user.username", default=None, allow_null=True)
    url = serializers.HyperlinkedIdentityField(view_name="api-question", lookup_url_kwarg="question_id")
    parent = serializers.IntegerField(source="parent_id", allow_null=True, read_only=True, help_text=PARENT_HELP)
    thread = serializers.IntegerField(source="thread_id", allow_null=True, read_only=True, help_text=THREAD_HELP)

    class Meta:
        model = Question
        fields = ("id", "question", "status", "asked_by", "created_at", "updated_at", "url", "parent", "thread")


class CancelledSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Question.Status.choices)
    cancel_requested = serializers.BooleanField()
