"""An article as the API shows it: as a question's source (with its retraction status and study design) and on its
own, with its abstract split as the verifier split it."""

from __future__ import annotations

from rest_framework import serializers

from indexer.records import CORRECTION_REF_TYPES
from indexer.study_design import DESIGNS
from webapp.corpus.models import Article


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


class ArticleSentenceSerializer(serializers.Serializer):
    text = serializers.CharField()
    start = serializers.IntegerField()
    end = serializers.IntegerField()


class ArticleSerializer(SourceSerializer):
    abstract = serializers.CharField()
    sentences = ArticleSentenceSerializer(many=True, help_text="The abstract split as the verifier split it.")
