"""Articles as stored in the database (the indexes hold only what search needs and point back here by PMID), the
PubMed files an admin has ingested, and the indexing jobs that ingest them."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from webapp.corpus.source_ids import pubmed_url


class Article(models.Model):
    class Retraction(models.TextChoices):
        """What PubMed says about trusting the paper as published, the most serious first (see retraction_status)."""

        RETRACTED = "retracted"
        CONCERN = "concern", "Expression of concern"
        CORRECTED = "corrected"
        NOTICE = "notice"  # the article is itself a retraction, expression-of-concern or erratum notice
        NONE = "none"

    pmid = models.CharField(max_length=32, unique=True)
    # PubMed's PMID Version; an older version never overwrites a newer one.
    version = models.PositiveSmallIntegerField(default=1)
    title = models.TextField(blank=True)
    abstract = models.TextField()
    journal = models.CharField(max_length=512, blank=True)
    journal_iso = models.CharField(max_length=256, blank=True)
    volume = models.CharField(max_length=64, blank=True)
    issue = models.CharField(max_length=64, blank=True)
    pages = models.CharField(max_length=64, blank=True)
    pub_date = models.CharField(max_length=64, blank=True)
    year = models.PositiveSmallIntegerField(null=True, blank=True)
    authors = models.JSONField(default=list, blank=True)  # display names, in order
    author_details = models.JSONField(default=list, blank=True)  # {name, collective, affiliations, orcid}
    mesh = models.JSONField(default=list, blank=True)
    publication_types = models.JSONField(default=list, blank=True)
    language = models.CharField(max_length=16, blank=True)
    doi = models.CharField(max_length=256, blank=True)
    pmc = models.CharField(max_length=32, blank=True)
    # The file the current version came from; the embed step of that file's job finds its articles by it.
    source_file = models.CharField(max_length=128, blank=True, db_index=True)
    # False until the vector index holds this version's chunks: a killed embed step resumes from these rows.
    embedded = models.BooleanField(default=False, db_index=True)
    # Derived at save time from CorrectionLink (this article's entries and the notices pointing at it), never parsed
    # straight from one file: a notice may arrive before or after its paper.
    retraction_status = models.CharField(max_length=16, choices=Retraction.choices, default=Retraction.NONE)
    retraction_notices = models.JSONField(default=list, blank=True)  # {ref_type, pmid, source}, as seen from here
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["pmid"]

    def __str__(self) -> str:
        return f"PMID {self.pmid}: {self.title[:80]}"

    @property
    def url(self) -> str:
        """The record's PubMed page; empty for a benchmark corpus's id that is not a PMID (e.g. `S2:123`)."""
        return pubmed_url(self.pmid)


class ArticleCounts(models.Model):
    """How many articles are stored and how many of them the vector index holds, in one row (id 1): the semantic
    coverage every question records, read without counting the article table (two full scans per question on
    PostgreSQL at PubMed's size).

    Kept by triggers on the article table (migration 0005), so every write keeps it right whoever makes it: the
    ingest and embedding steps, a deletion, the admin, another process. A database emptied table by table loses
    the row; the next read counts once and stores it again (services/articles.py `article_counts_recount`).
    """

    ROW = 1

    articles = models.BigIntegerField(default=0)
    embedded = models.BigIntegerField(default=0)

    class Meta:
        verbose_name_plural = "article counts"

    def __str__(self) -> str:
        return f"{self.embedded} of {self.articles} articles embedded"


class CorrectionLink(models.Model):
    """One retraction, expression-of-concern or erratum entry of a citation's CommentsCorrectionsList.

    Kept whether or not the citation carrying it is stored as an article (most notices have no abstract), so that a
    paper and a notice about it resolve whichever arrives first. Replaced when its citation is read with other entries.
    """

    pmid = models.CharField(max_length=32, db_index=True)  # the citation carrying the entry
    ref_type = models.CharField(max_length=32)  # PubMed's RefType: RetractionIn, RetractionOf, ErratumFor...
    ref_pmid = models.CharField(max_length=32, blank=True, db_index=True)  # the citation it refers to
    ref_source = models.TextField(blank=True)  # that citation as PubMed prints it
    cited_as = models.TextField(blank=True)  # the carrying citation in one line: what a paper shows for a notice

    def __str__(self) -> str:
        return f"PMID {self.pmid} {self.ref_type} PMID {self.ref_pmid or '?'}"


class IndexJob(models.Model):
    """One admin-started indexing run over a set of files (or a rebuild); workers update its counters as it goes."""

    class Kind(models.TextChoices):
        BASELINE = "baseline"
        UPDATES = "updates"
        FILES = "files"  # local files, folders or uploads
        REBUILD = "rebuild"  # both indexes rebuilt from the article table into a new generation

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"  # finished, with at least one file failed
        CANCELLED = "cancelled"  # stopped at an admin's request; files not reached are marked cancelled

    kind = models.CharField(max_length=16, choices=Kind.choices)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="index_jobs"
    )
    # Workers look at it before every step of every file (and between a rebuild's batches).
    cancel_requested = models.BooleanField(default=False)
    files_total = models.PositiveIntegerField(default=0)
    files_done = models.PositiveIntegerField(default=0)
    files_failed = models.PositiveIntegerField(default=0)
    files_cancelled = models.PositiveIntegerField(default=0)
    articles = models.PositiveIntegerField(default=0)
    articles_total = models.PositiveIntegerField(default=0)  # a rebuild: the articles stored when it started
    deleted = models.PositiveIntegerField(default=0)
    generation = models.CharField(max_length=64, blank=True)  # a rebuild: the generation it built and switched to
    # What the indexes held when the job finished, counted by the worker: the embedded vector shard can only be
    # opened by the process that holds it, so the status page falls back on these.
    lexical_documents = models.PositiveBigIntegerField(null=True, blank=True)
    vector_points = models.PositiveBigIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.kind} job {self.pk} ({self.status})"

    @property
    def finished(self) -> bool:
        return self.finished_at is not None

    @property
    def progress(self) -> tuple[int, int]:
        """(value, maximum) of the progress bar: articles written for a rebuild, files finished otherwise."""
        if self.kind == self.Kind.REBUILD:
            # The catch-up pass rewrites articles changed meanwhile, so the count may pass the total.
            return min(self.articles, self.articles_total), self.articles_total
        return self.files_done + self.files_failed, self.files_total

    @property
    def articles_per_second(self) -> float:
        if not self.started_at or not self.articles:
            return 0.0
        elapsed = ((self.finished_at or timezone.now()) - self.started_at).total_seconds()
        return self.articles / elapsed if elapsed > 0 else 0.0

    @property
    def eta_seconds(self) -> float | None:
        """Remaining time at the pace of the files (a rebuild: articles) finished so far; None until one has."""
        finished, total = self.progress
        if not self.started_at or not finished or self.finished_at:
            return None
        elapsed = (timezone.now() - self.started_at).total_seconds()
        return elapsed / finished * max(total - finished, 0)


class IndexJobEvent(models.Model):
    """One line of a job's log. Workers insert rows and never rewrite them, so concurrent writers lose nothing."""

    job = models.ForeignKey(IndexJob, on_delete=models.CASCADE, related_name="events")
    created_at = models.DateTimeField(default=timezone.now)
    message = models.TextField()

    class Meta:
        ordering = ["created_at", "pk"]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M:%S} {self.message}"


class PubmedFile(models.Model):
    """A baseline or update file as this site has processed it; a finished name with the same md5 is skipped."""

    class Status(models.TextChoices):
        PENDING = "pending"
        DOWNLOADED = "downloaded"  # on disk, md5 checked
        STORED = "stored"  # parsed into the database and the lexical index; deletions applied
        INDEXED = "indexed"  # embedded into the vector index: finished
        FAILED = "failed"
        CANCELLED = "cancelled"  # its job was cancelled before the file was finished

    # A file that needs no further step in its job.
    TERMINAL = (Status.INDEXED, Status.FAILED, Status.CANCELLED)

    name = models.CharField(max_length=128, unique=True)
    url = models.URLField(max_length=512, blank=True)
    # A local file (under VERIMED_INGEST_DIRS, or an upload) read in place instead of downloaded from `url`.
    source_path = models.CharField(max_length=1024, blank=True)
    md5 = models.CharField(max_length=32, blank=True)
    size = models.BigIntegerField(default=0)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    articles = models.PositiveIntegerField(default=0)
    skipped_without_abstract = models.PositiveIntegerField(default=0)
    deleted = models.PositiveIntegerField(default=0)
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True)
    job = models.ForeignKey(IndexJob, null=True, blank=True, on_delete=models.SET_NULL, related_name="files")
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.status})"
