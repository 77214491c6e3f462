"""Admin pages for articles."""

from __future__ import annotations

from django.contrib import admin

from webapp.corpus.models import Article


@admin.register(Article)
class ArticleAdmin(admin.ModelAdmin):
    list_display = ("pmid", "title", "journal", "year")
    search_fields = ("pmid", "title")
    list_filter = ("year",)
