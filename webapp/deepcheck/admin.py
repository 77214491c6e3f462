"""Admin pages for deep checks."""

from __future__ import annotations

from django.contrib import admin

from webapp.deepcheck.models import ClaimFlag, DeepCheck


@admin.register(DeepCheck)
class DeepCheckAdmin(admin.ModelAdmin):
    list_display = ("id", "question", "status", "stage", "updated_at")
    list_filter = ("status",)


@admin.register(ClaimFlag)
class ClaimFlagAdmin(admin.ModelAdmin):
    list_display = ("id", "flag", "sentence_position", "claim_index", "claim_verdict")
