"""Admin pages for questions and what they produced."""

from __future__ import annotations

from django.contrib import admin

from webapp.qa.models import AnswerSentence, Question, RetrievedDocument


class RetrievedInline(admin.TabularInline):
    model = RetrievedDocument
    extra = 0


class SentenceInline(admin.TabularInline):
    model = AnswerSentence
    extra = 0
    fields = ("position", "display_text", "verdict")


@admin.register(Question)
class QuestionAdmin(admin.ModelAdmin):
    list_display = ("id", "text", "status", "created_at")
    list_filter = ("status",)
    search_fields = ("text",)
    inlines = [RetrievedInline, SentenceInline]
