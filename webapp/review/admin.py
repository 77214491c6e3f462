"""Admin pages for flags: what the review queue shows, plus direct edits when a flag was closed by mistake."""

from __future__ import annotations

from django.contrib import admin

from webapp.review.models import Flag


@admin.register(Flag)
class FlagAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "created_at",
        "question",
        "reason",
        "verifier_verdict",
        "status",
        "reviewer_label",
        "flagged_by",
        "resolved_by",
    )
    list_filter = ("status", "reason", "verifier_verdict", "reviewer_label")
    search_fields = ("comment", "resolution_note", "pmid", "sentence__display_text", "question__text")
    list_select_related = ("question", "flagged_by", "resolved_by")
    raw_id_fields = ("question", "sentence", "flagged_by", "resolved_by")
    readonly_fields = ("created_at",)
    date_hierarchy = "created_at"
