"""A question's deep check (one per question, run again in place) and the reviewers' flags on its claims."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from webapp.qa.models import Question
from webapp.review.models import Flag


class DeepCheck(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"
        STOPPED = "stopped"

    question = models.OneToOneField(Question, related_name="deep_check", on_delete=models.CASCADE)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    stage = models.CharField(max_length=32, blank=True, help_text="extracting, judging, searching or done")
    progress = models.PositiveSmallIntegerField(default=0, help_text="percent done")
    stop_requested = models.BooleanField(default=False)
    error = models.TextField(blank=True)
    tree = models.JSONField(
        null=True, blank=True, help_text="sentences, their claims and each claim's evidence (verifier.claim_tree)"
    )
    settings = models.JSONField(default=dict, help_text="what it ran with: token budget, abstracts per search")
    models_used = models.JSONField(default=dict, help_text="the extracting model, verifier and evidence finder")
    timings_ms = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"deep check of question {self.question_id} ({self.status})"

    @property
    def finished(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.FAILED, self.Status.STOPPED)


class ClaimFlag(models.Model):
    """Points a review flag (raised on the claim's sentence, so the review queue lists it) at one claim of a deep
    check, keeping the claim as it read when flagged: a re-run may split the sentence differently."""

    flag = models.OneToOneField(Flag, related_name="claim", on_delete=models.CASCADE)
    deep_check = models.ForeignKey(DeepCheck, related_name="claim_flags", on_delete=models.CASCADE)
    sentence_position = models.PositiveSmallIntegerField()
    claim_index = models.PositiveSmallIntegerField()
    claim_text = models.TextField()
    claim_verdict = models.CharField(max_length=32, help_text="the deep check's verdict on the claim when flagged")

    def __str__(self) -> str:
        return f"flag {self.flag_id} on claim {self.claim_index} of sentence {self.sentence_position}"
