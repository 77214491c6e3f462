"""Admin pages for articles, indexing jobs and the PubMed files they processed."""

from __future__ import annotations

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from webapp.corpus.models import Article, IndexJob, PubmedFile


@admin.register(Article)
class ArticleAdmin(admin.ModelAdmin):
    list_display = ("pmid", "version", "title", "journal", "year", "embedded")
    search_fields = ("pmid", "title", "doi")
    list_filter = ("year", "embedded")


class PubmedFileInline(admin.TabularInline):
    model = PubmedFile
    fields = ("name", "status", "articles", "deleted", "attempts", "error")
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(IndexJob)
class IndexJobAdmin(admin.ModelAdmin):
    list_display = ("pk", "kind", "status", "progress", "articles", "rate", "eta", "created_at", "finished_at", "page")
    list_filter = ("kind", "status")
    readonly_fields = [field.name for field in IndexJob._meta.fields]
    inlines = [PubmedFileInline]
    # Adds "Start a re-index" beside the list: jobs are started from the site's own page, not added here.
    change_list_template = "admin/corpus/indexjob/change_list.html"

    @admin.display(description="progress page")
    def page(self, job: IndexJob) -> str:
        return format_html('<a href="{}">job {} page</a>', reverse("index-job", args=[job.pk]), job.pk)

    @admin.display(description="files")
    def progress(self, job: IndexJob) -> str:
        return f"{job.files_done + job.files_failed}/{job.files_total} ({job.files_failed} failed)"

    @admin.display(description="articles/s")
    def rate(self, job: IndexJob) -> str:
        return f"{job.articles_per_second:.1f}"

    @admin.display(description="ETA")
    def eta(self, job: IndexJob) -> str:
        seconds = job.eta_seconds
        return "" if seconds is None else f"{seconds / 60:.0f} min"


@admin.register(PubmedFile)
class PubmedFileAdmin(admin.ModelAdmin):
    list_display = ("name", "status", "articles", "deleted", "attempts", "md5", "finished_at")
    list_filter = ("status",)
    search_fields = ("name",)
