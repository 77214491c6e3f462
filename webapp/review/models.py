"""A flag is one person's doubt about one answer sentence; a reviewer closes it with a label and a note."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from webapp.qa.models import AnswerSentence, Question


class Flag(models.Model):
    class Reason(models.TextChoices):
        UNSUPPORTED = "unsupported", "Unsupported by the cited abstract"
        WRONG_VERDICT = "wrong_verdict", "Wrong verdict"
        WRONG_CITATION = "wrong_citation", "Wrong citation"
        OTHER = "other", "Other"

    class Status(models.TextChoices):
        OPEN = "open"
        RESOLVED = "resolved"  # the reviewer agreed something was wrong
        DISMISSED = "dismissed"  # the reviewer found the answer and its verdict right

    class Label(models.TextChoices):
        SUPPORT = "SUPPORT"
        CONTRADICT = "CONTRADICT"
        NO_EVIDENCE = "NO_EVIDENCE"

    question = models.ForeignKey(Question, related_name="flags", on_delete=models.CASCADE)
    sentence = models.ForeignKey(AnswerSentence, related_name="flags", on_delete=models.CASCADE)
    pmid = models.CharField(max_length=32, blank=True, help_text="the cited abstract the flag is about, if one")
    reason = models.CharField(max_length=16, choices=Reason.choices)
    comment = models.TextField(blank=True)
    verifier_verdict = models.CharField(max_length=16, help_text="the verifier's label when the flag was raised")
    flagged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="flags_raised"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    reviewer_label = models.CharField(
        max_length=16, choices=Label.choices, blank=True, help_text="the label the reviewer says is right"
    )
    resolution_note = models.TextField(blank=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="flags_resolved"
    )
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "created_at"])]

    def __str__(self) -> str:
        return f"flag {self.pk} ({self.reason}, {self.status})"

    @property
    def verifier_confirmed(self) -> bool | None:
        """Whether the reviewer's label matches the verifier's; None until a reviewer has labelled it."""
        if not self.reviewer_label:
            return None
        return self.reviewer_label == self.verifier_verdict
