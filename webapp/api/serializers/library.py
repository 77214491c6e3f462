"""What the API says about a researcher's library: documents, their passages, and what became of each upload."""

from __future__ import annotations

from rest_framework import serializers

from webapp.library.models import Document, Passage


class PassageSerializer(serializers.ModelSerializer):
    class Meta:
        model = Passage
        fields = ["ordinal", "section", "page", "text", "ocr"]


class DocumentSerializer(serializers.ModelSerializer):
    citation = serializers.CharField(
        source="citation_prefix", read_only=True, help_text="How an answer cites it, followed by `:p<page>`."
    )
    searchable = serializers.SerializerMethodField(
        help_text="Whether its passages are in the library's indexes yet (indexing runs in the background)."
    )
    indexed_pmid = serializers.SerializerMethodField(
        help_text="The PMID of the same paper in the PubMed index, when the index holds it; null otherwise."
    )

    class Meta:
        model = Document
        fields = [
            "id",
            "kind",
            "filename",
            "title",
            "doi",
            "pmid",
            "pmcid",
            "pages",
            "byte_size",
            "sha256",
            "citation",
            "searchable",
            "index_error",
            "indexed_pmid",
            "created_at",
        ]

    def get_searchable(self, document: Document) -> bool:
        return document.indexed_at is not None

    def get_indexed_pmid(self, document: Document) -> str | None:
        return document.pmid if document.article_id else None


class DocumentDetailSerializer(DocumentSerializer):
    passages = PassageSerializer(many=True, read_only=True)

    class Meta(DocumentSerializer.Meta):
        fields = [*DocumentSerializer.Meta.fields, "passages"]


class DocumentUploadSerializer(serializers.Serializer):
    file = serializers.ListField(
        child=serializers.FileField(allow_empty_file=True),
        help_text="One or more PDF (with a text layer) or JATS XML files, each as a `file` part.",
    )


class UploadResultSerializer(serializers.Serializer):
    filename = serializers.CharField()
    outcome = serializers.ChoiceField(choices=["added", "already in your library", "refused"])
    status = serializers.IntegerField(help_text="201 added, 200 already there, else the refusal's status.")
    detail = serializers.CharField(allow_null=True, help_text="Why it was refused; null when it was not.")
    document = DocumentSerializer(allow_null=True)


class UploadResultsSerializer(serializers.Serializer):
    detail = serializers.CharField(
        required=False, help_text="When every file was refused (or none was sent): the first refusal's reason."
    )
    results = UploadResultSerializer(many=True)
