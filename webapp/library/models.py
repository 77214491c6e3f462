"""An uploaded paper, its file and the passages read from it. Every row belongs to one researcher and is seen by
nobody else: not reviewers, not admins (webapp/library/access.py)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from webapp.corpus.models import Article


class Document(models.Model):
    class Kind(models.TextChoices):
        PDF = "pdf", "PDF"
        JATS = "jats", "JATS XML"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, related_name="documents", on_delete=models.CASCADE)
    kind = models.CharField(max_length=8, choices=Kind.choices)
    filename = models.CharField(max_length=255, help_text="the name it was uploaded under, for the owner's eyes only")
    sha256 = models.CharField(
        max_length=64, help_text="of the file's bytes: the same file uploaded twice is one document"
    )
    byte_size = models.PositiveBigIntegerField()
    pages = models.PositiveIntegerField(null=True, blank=True, help_text="a PDF's page count; none for JATS")
    title = models.TextField(blank=True)
    doi = models.CharField(max_length=256, blank=True)
    pmid = models.CharField(max_length=32, blank=True, help_text="as the file states it")
    pmcid = models.CharField(max_length=32, blank=True)
    # The PubMed record of the same paper, when the index holds it: shown beside the document rather than copied.
    article = models.ForeignKey(Article, null=True, blank=True, related_name="+", on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    # Searchable once both legs hold its passages; until then the page says it is waiting (or why it failed).
    indexed_at = models.DateTimeField(null=True, blank=True)
    index_error = models.TextField(blank=True)
    # Set by a deletion: hidden from every page and search at once, removed from both legs, then from the database.
    deleting = models.BooleanField(default=False)
    # When its indexing task was last queued: its place in the queue valve and in line beside questions, and when a
    # task that never ran counts as lost (then it may be queued again).
    index_queued_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [models.UniqueConstraint(fields=["owner", "sha256"], name="unique_document_file_per_owner")]

    def __str__(self) -> str:
        return f"document {self.pk} of user {self.owner_id}"

    @property
    def citation_prefix(self) -> str:
        """What an answer cites a passage of this document by, before its page: `DOC:<id>`."""
        return f"DOC:{self.pk}"


class DocumentFile(models.Model):
    """The uploaded bytes, apart from the document so that listing documents never loads them. In the database, so a
    document and its file are stored, backed up and deleted together, in one transaction."""

    document = models.OneToOneField(Document, related_name="file", on_delete=models.CASCADE, primary_key=True)
    data = models.BinaryField()

    def __str__(self) -> str:
        return f"file of document {self.document_id}"


class Passage(models.Model):
    document = models.ForeignKey(Document, related_name="passages", on_delete=models.CASCADE)
    ordinal = models.PositiveIntegerField(help_text="0-based, in reading order")
    section = models.CharField(max_length=512, blank=True)
    page = models.PositiveIntegerField(null=True, blank=True, help_text="the PDF page it starts on; none for JATS")
    text = models.TextField()
    ocr = models.BooleanField(default=False, help_text="read by OCR from a scanned page: it may hold misread words")

    class Meta:
        ordering = ["document", "ordinal"]
        constraints = [models.UniqueConstraint(fields=["document", "ordinal"], name="unique_passage_ordinal")]

    def __str__(self) -> str:
        return f"passage {self.ordinal} of document {self.document_id}"


class LibraryAction(models.Model):
    """Work a researcher asked of the library: a file read (an upload attempt) or an indexing queued. Counted against
    `VERIMED_LIBRARY_ACTIONS_PER_HOUR`; a row of its own, since a refused upload leaves no document and a document
    deleted since must still count."""

    class Kind(models.TextChoices):
        UPLOAD = "upload", "an upload"
        INDEX = "index", "an indexing"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, related_name="+", on_delete=models.CASCADE)
    kind = models.CharField(max_length=8, choices=Kind.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["owner", "created_at"], name="library_action_owner_created")]

    def __str__(self) -> str:
        return f"{self.owner_id} started {self.get_kind_display()} at {self.created_at:%Y-%m-%d %H:%M}"
