"""What the API reads and writes. Input rules come from the pipeline's own pydantic settings (bounds, choices,
cross-field checks), so the API, the page and the CLI cannot disagree about what a valid question is."""

from __future__ import annotations

from typing import Any, get_args

import annotated_types
import pydantic
from django.conf import settings
from rest_framework import serializers
from rest_framework.settings import api_settings

from indexer.hybrid import Fusion, HybridSettings, Mode
from indexer.records import CORRECTION_REF_TYPES
from indexer.study_design import DESIGNS
from verifier.consensus import CONSENSUS_ABSTRACTS, CONSENSUS_LABELS
from webapp.api.watch_serializers import RecheckSerializer
from webapp.corpus.models import Article
from webapp.qa.models import Question
from webapp.qa.pipeline import RetrievalFilters
from webapp.review.models import Flag
from webapp.watch.selectors import RECHECKS_LISTED

# The API offers a narrower range than the pipeline accepts: enough to compare runs, never a huge prompt.
API_TOP_K = (5, 20)
_RETRIEVAL_FIELDS = ("mode", "top_k", "lexical_weight", "semantic_weight", "fusion", "rerank")
_FILTER_FIELDS = (
    "year_from", "year_to", "journals", "publication_types", "mesh", "include_retracted", "prefer_stronger_designs",
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


class DetailSerializer(serializers.Serializer):
    detail = serializers.CharField()


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="Send as `Authorization: Token <token>`.")


class QuestionCreateSerializer(serializers.Serializer):
    # Blank and over-long text are rejected by `question_create`, whose messages the page shows too; its limit is
    # `VERIMED_MAX_QUESTION_CHARS`, the one the ask form's text box has.
    question = serializers.CharField(
        allow_blank=True,
        trim_whitespace=False,
        help_text=f"The question, in English; at most {settings.VERIMED_MAX_QUESTION_CHARS:,} characters once "
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
    parent = serializers.IntegerField(
        required=False,
        allow_null=True,
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


_PARENT_HELP = "The question this one follows up; null for a question that follows none."
_THREAD_HELP = (
    "The id of its thread's first question, for a follow-up; null for a question that follows none (a first question "
    "included: its follow-ups name it here)."
)


class QuestionSummarySerializer(serializers.ModelSerializer):
    question = serializers.CharField(source="text")
    asked_by = serializers.CharField(source="user.username", default=None, allow_null=True)
    url = serializers.HyperlinkedIdentityField(view_name="api-question", lookup_url_kwarg="question_id")
    parent = serializers.IntegerField(source="parent_id", allow_null=True, read_only=True, help_text=_PARENT_HELP)
    thread = serializers.IntegerField(source="thread_id", allow_null=True, read_only=True, help_text=_THREAD_HELP)

    class Meta:
        model = Question
        fields = ("id", "question", "status", "asked_by", "created_at", "updated_at", "url", "parent", "thread")


class CancelledSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Question.Status.choices)
    cancel_requested = serializers.BooleanField()


# --- The shapes `webapp.qa.selectors` returns. Views return the selector's dict as it is (the page reads the very
# same JSON); these classes document it for the schema, and a test keeps them and the selector in step.


class CitationVerdictSerializer(serializers.Serializer):
    label = serializers.CharField(
        help_text="What the page shows: SUPPORT, CONTRADICT, NO_EVIDENCE, UNCLEAR (the verifier's calibrated "
        "confidence is below the threshold stored with its checkpoint; see `leaning`) or NO_REFERENCE (not among "
        "the sources)."
    )
    confidence = serializers.FloatField(
        allow_null=True,
        help_text="The verifier's calibrated probability of `leaning`; null for NO_REFERENCE and the LLM judge.",
    )
    leaning = serializers.CharField(
        allow_null=True,
        help_text="The label the verifier leans to (SUPPORT, CONTRADICT or NO_EVIDENCE), also when `label` is "
        "UNCLEAR. Null for NO_REFERENCE and for answers verified before it was stored.",
    )
    raw_label = serializers.CharField(
        allow_null=True,
        help_text="The plain argmax before calibration and the decision rule. Null as for `leaning`.",
    )
    probabilities = serializers.DictField(
        child=serializers.FloatField(),
        help_text="Calibrated probability per label; empty where the verifier gives none.",
    )
    raw_probabilities = serializers.DictField(
        child=serializers.FloatField(),
        help_text="The plain softmax per label, before calibration; empty where the verifier gives none.",
    )
    evidence_sentences = serializers.ListField(
        child=serializers.IntegerField(), help_text="Indices into the article's `sentences`."
    )
    evidence_spans = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField(), min_length=2, max_length=2),
        help_text="[start, end] character offsets into the abstract.",
    )
    evidence_text = serializers.ListField(child=serializers.CharField(), help_text="Those sentences' text.")


class AnswerSentenceSerializer(serializers.Serializer):
    text = serializers.CharField(help_text="As the model wrote it, citations included.")
    display_text = serializers.CharField(help_text="Without citation markup.")
    verdict = serializers.CharField(
        help_text="The overall verdict across the cited abstracts: CONTRADICT if any, else SUPPORT if any, else "
        "NO_EVIDENCE; UNCLEAR citations are left out, and the verdict is UNCLEAR only when every citation is. "
        "NO_REFERENCE when it cites only papers the model was not given; UNCITED when it cites none."
    )
    confidence = serializers.FloatField(allow_null=True)
    citations = serializers.ListField(child=serializers.CharField(), help_text="Cited PMIDs, in order.")
    verdicts = serializers.DictField(child=CitationVerdictSerializer(), help_text="Per cited PMID.")


class NoticeSerializer(serializers.Serializer):
    ref_type = serializers.ChoiceField(
        choices=list(CORRECTION_REF_TYPES),
        help_text="PubMed's RefType, from this article's side: RetractionIn, ExpressionOfConcernIn, ErratumIn name "
        "a notice about it; RetractionOf, ExpressionOfConcernFor, ErratumFor the paper it is a notice about.",
    )
    pmid = serializers.CharField(allow_blank=True, help_text="The other citation's PMID; empty when PubMed gives none.")
    source = serializers.CharField(allow_blank=True, help_text="The other citation as PubMed prints it.")


class RetractionSerializer(serializers.Serializer):
    status = serializers.ChoiceField(
        choices=Article.Retraction.choices,
        help_text="retracted (RetractionIn, the type Retracted Publication, or a stored notice's RetractionOf), "
        "concern (an expression of concern), corrected (an erratum), notice (the article is itself a retraction, "
        "concern or erratum notice) or none; the first that applies. Retracted papers are left out of retrieval "
        "unless the question asked for them (`include_retracted`).",
    )
    notices = NoticeSerializer(
        many=True, help_text="Its own entries and those of stored notices pointing at it, from its side."
    )


class StudyDesignSerializer(serializers.Serializer):
    key = serializers.CharField(help_text="One of: " + ", ".join(design.key for design in DESIGNS) + ".")
    label = serializers.CharField(help_text="As the badge reads, e.g. Randomised controlled trial.")


class SourceSerializer(serializers.Serializer):
    pmid = serializers.CharField(
        help_text="A PMID, or another corpus's id as it is (a benchmark's Semantic Scholar id `S2:123`)."
    )
    title = serializers.CharField()
    journal = serializers.CharField()
    year = serializers.IntegerField(allow_null=True)
    url = serializers.URLField(allow_blank=True, help_text="The PubMed page; empty for an id that is not a PMID.")
    authors = serializers.ListField(child=serializers.CharField())
    doi = serializers.CharField(allow_blank=True)
    retraction = RetractionSerializer()
    study_design = StudyDesignSerializer(
        allow_null=True,
        help_text="The strongest design its PubMed publication types name (MeSH headings when none does); designs "
        "from strongest: meta-analysis, systematic-review, rct, clinical-trial, observational, case-report, review, "
        "preclinical (animal or in-vitro). Null when none applies.",
    )


class RetrievedSerializer(serializers.Serializer):
    pmid = serializers.CharField()
    rank = serializers.IntegerField()
    score = serializers.FloatField(help_text="The fused score.")
    lexical_score = serializers.FloatField(help_text="Min-max normalised BM25 score; 0 if that leg missed it.")
    semantic_score = serializers.FloatField(help_text="Min-max normalised cosine score; 0 if that leg missed it.")
    lexical_raw = serializers.FloatField(allow_null=True)
    semantic_raw = serializers.FloatField(allow_null=True)
    rerank_score = serializers.FloatField(
        allow_null=True,
        help_text="The reranker's score of its best passage (the order it was given); null when "
        "the question's search did not rerank, or this abstract was beyond the candidates it re-scored.",
    )
    source = SourceSerializer(allow_null=True, help_text="None when the article has since left the corpus.")


class ThreadSourceSerializer(serializers.Serializer):
    pmid = serializers.CharField()
    source = SourceSerializer(help_text="An article that has since left the corpus is not listed.")


class ConsensusPmidsSerializer(serializers.Serializer):
    support = serializers.ListField(child=serializers.CharField(), help_text="PMIDs of the abstracts that support it.")
    contradict = serializers.ListField(child=serializers.CharField(), help_text="Those that contradict it.")
    no_evidence = serializers.ListField(child=serializers.CharField(), help_text="Those that say nothing about it.")
    unclear = serializers.ListField(
        child=serializers.CharField(), help_text="Those the verifier was not confident enough about to show a label."
    )


class ConsensusVerdictSerializer(serializers.Serializer):
    label = serializers.ChoiceField(choices=list(CONSENSUS_LABELS))
    confidence = serializers.FloatField(
        allow_null=True, help_text="The verifier's calibrated confidence in its leaning; null for the LLM judge."
    )
    evidence_spans = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField(), min_length=2, max_length=2),
        help_text="[start, end] character offsets into the abstract of the sentences the verifier read as evidence.",
    )


class ConsensusSerializer(serializers.Serializer):
    claim = serializers.CharField(help_text='The claim a "yes" would make, which the verifier checked.')
    read = serializers.IntegerField(
        help_text=f"Abstracts read: the first {CONSENSUS_ABSTRACTS} retrieved (fewer when fewer were retrieved)."
    )
    support = serializers.IntegerField(help_text="Abstracts that support the claim.")
    contradict = serializers.IntegerField(help_text="Abstracts that contradict it.")
    no_evidence = serializers.IntegerField(help_text="Abstracts that say nothing about it (NO_EVIDENCE).")
    unclear = serializers.IntegerField(
        help_text="Abstracts the verifier's calibrated decision rule shows as UNCLEAR (not confident enough)."
    )
    pmids = ConsensusPmidsSerializer(help_text="Each count's abstracts, keyed as the counts are, in retrieval order.")
    speaking_minimum = serializers.IntegerField(
        help_text="When support + contradict is below this, too few abstracts speak to the claim to call a consensus."
    )
    verdicts = serializers.DictField(child=ConsensusVerdictSerializer(), help_text="Per PMID read.")


class CitationNoteSerializer(serializers.Serializer):
    written = serializers.CharField()
    raw_id = serializers.CharField()
    pmid = serializers.CharField(allow_null=True)
    how = serializers.ChoiceField(choices=["repaired", "unmatched"])


class QuestionDetailSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    question = serializers.CharField()
    status = serializers.ChoiceField(choices=Question.Status.choices)
    queue_position = serializers.IntegerField(
        allow_null=True,
        min_value=1,
        help_text="Until its answer starts being written (queued, or retrieved and waiting for the model): 1 when it "
        "is next, else one plus the questions queued or running that were asked before it. Null after that.",
    )
    error = serializers.CharField(allow_blank=True)
    verification_status = serializers.ChoiceField(
        choices=Question.Verification.choices,
        allow_null=True,
        help_text="Null until the verify stage ends (and for a question that failed or stopped before it). "
        "`unavailable`: the verifier could not run, so the answer and its citations stand without verdicts "
        "(`sentences` is empty) and `verification_error` says why. Not the UNCLEAR verdict, which is the "
        "verifier's own low confidence.",
    )
    verification_error = serializers.CharField(allow_blank=True, help_text="Why verification is unavailable.")
    answer = serializers.CharField(allow_blank=True, help_text="Grows while the model writes.")
    answer_raw = serializers.CharField(allow_blank=True, help_text="Exactly as the model wrote it.")
    cannot_answer = serializers.BooleanField()
    cancel_requested = serializers.BooleanField()
    first_token_at = serializers.DateTimeField(allow_null=True)
    context = serializers.DictField(help_text="PMIDs given to the model, trimmed and dropped to fit; prompt tokens.")
    citation_notes = CitationNoteSerializer(many=True)
    sentences = AnswerSentenceSerializer(many=True, help_text="Empty until verification is done.")
    retrieved = RetrievedSerializer(many=True)
    thread_sources = ThreadSourceSerializer(
        many=True,
        help_text="For a follow-up, the abstracts its thread's earlier answers cited that the model was given besides "
        "`retrieved` (at most a few, after its own hits, never twice); empty for other questions.",
    )
    parent = serializers.IntegerField(allow_null=True, help_text=_PARENT_HELP)
    thread = serializers.IntegerField(allow_null=True, help_text=_THREAD_HELP)
    thread_questions = serializers.ListField(
        child=serializers.IntegerField(),
        help_text="The ids of every question of its thread, oldest first (its first question, then the follow-ups); "
        "empty for a question that follows none and has no follow-ups.",
    )
    consensus = ConsensusSerializer(
        allow_null=True,
        help_text="For a question asked yes or no (by its form: an auxiliary verb first, as BioASQ writes them), how "
        "its first retrieved abstracts answer it, by the verifier. Null for other questions, until verification is "
        "done, and when it could not be made.",
    )
    timings_ms = serializers.DictField(help_text="Milliseconds per stage, and generation speed figures.")
    semantic_coverage = serializers.FloatField(
        allow_null=True,
        help_text="Share of the stored articles the dense (semantic) leg could find when this question was "
        "retrieved: below 1 while the corpus is still being embedded (keyword search covers every article). Null "
        "before retrieval.",
    )
    models = serializers.DictField(child=serializers.CharField(), help_text="Model ids used per stage.")
    settings = serializers.DictField(help_text="The pipeline settings this answer is made with.")
    watched = serializers.BooleanField(
        help_text="Whether you watch this answer: it is re-checked after each PubMed update and index rebuild "
        "(`POST` or `DELETE` on `/api/v1/questions/{id}/watch`); only the person who asked may watch it."
    )
    rechecks = RecheckSerializer(
        many=True,
        help_text=f"Its re-checks, newest first (the newest {RECHECKS_LISTED}): the answer is never rewritten, what "
        "changed since the previous check is listed here.",
    )


class ArticleSentenceSerializer(serializers.Serializer):
    text = serializers.CharField()
    start = serializers.IntegerField()
    end = serializers.IntegerField()


class ArticleSerializer(SourceSerializer):
    abstract = serializers.CharField()
    sentences = ArticleSentenceSerializer(many=True, help_text="The abstract split as the verifier split it.")


# --- Flags


class FlagCreateSerializer(serializers.Serializer):
    question = serializers.IntegerField(help_text="The question's id.")
    sentence = serializers.IntegerField(min_value=0, help_text="The answer sentence's position, from 0.")
    reason = serializers.ChoiceField(choices=Flag.Reason.choices)
    pmid = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=32, help_text="The cited PMID it is about, if one."
    )
    comment = serializers.CharField(required=False, allow_blank=True, default="", max_length=4000)


class FlagListQuerySerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=Flag.Status.choices, required=False)
    reason = serializers.ChoiceField(choices=Flag.Reason.choices, required=False)
    question = serializers.IntegerField(required=False, help_text="Only flags on this question.")


class FlagSerializer(serializers.ModelSerializer):
    question = serializers.IntegerField(source="question_id", read_only=True)
    sentence = serializers.IntegerField(
        source="sentence.position", read_only=True, help_text="The answer sentence's position."
    )
    sentence_text = serializers.CharField(source="sentence.display_text", read_only=True)
    flagged_by = serializers.CharField(source="flagged_by.username", default=None, read_only=True, allow_null=True)
    resolved_by = serializers.CharField(source="resolved_by.username", default=None, read_only=True, allow_null=True)
    verifier_confirmed = serializers.BooleanField(
        allow_null=True,
        read_only=True,
        help_text="Whether the reviewer's label matches the verifier's; null until labelled.",
    )

    class Meta:
        model = Flag
        fields = (
            "id", "question", "sentence", "sentence_text", "pmid", "reason", "comment", "verifier_verdict",
            "flagged_by", "created_at", "status", "reviewer_label", "resolution_note", "resolved_by", "resolved_at",
            "verifier_confirmed",
        )  # fmt: skip
        read_only_fields = fields
        extra_kwargs = {
            "verifier_verdict": {
                "help_text": "The sentence's overall verdict when the flag was raised, UNCLEAR included. A reviewer "
                "labels SUPPORT, CONTRADICT or NO_EVIDENCE, so an UNCLEAR verdict is never confirmed."
            }
        }


def non_field_error(message: str) -> serializers.ValidationError:
    return serializers.ValidationError({api_settings.NON_FIELD_ERRORS_KEY: [message]})
