"""Articles as stored in the database; the indexes hold only what search needs and point back here by PMID."""

from __future__ import annotations

from django.db import models


class Article(models.Model):
    pmid = models.CharField(max_length=32, unique=True)
    title = models.TextField(blank=True)
    abstract = models.TextField()
    journal = models.CharField(max_length=512, blank=True)
    year = models.PositiveSmallIntegerField(null=True, blank=True)
    authors = models.JSONField(default=list, blank=True)
    mesh = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["pmid"]

    def __str__(self) -> str:
        return f"PMID {self.pmid}: {self.title[:80]}"

    @property
    def url(self) -> str:
        """Where a reader can see the source record."""
        if self.pmid.startswith("S2:"):
            return f"https://api.semanticscholar.org/CorpusID:{self.pmid[3:]}"
        return f"https://pubmed.ncbi.nlm.nih.gov/{self.pmid}/"
