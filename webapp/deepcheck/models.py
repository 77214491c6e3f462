"""A question's deep check (one per question, run again in place) and the reviewers' flags on its claims."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone

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
    run = models.PositiveIntegerField(
        default=0, help_text="how many times it was started: a task queued for an earlier run finds it and does nothing"
    )
    queued_at = models.DateTimeField(default=timezone.now, help_text="when it was last started: its place in line")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "queued_at"], name="deep_check_status_queued")]

    def __str__(self) -> str:
        return f"deep check of question {self.question_id} ({self.status})"

    @property
    def finished(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.FAILED, self.Status.STOPPED)

    @property
    def lost(self) -> bool:
        """Queued or running, but unmoved for longer than a task may run: its worker died (or its task was lost)
        and nothing will finish it."""
        return not self.finished and self.updated_at < lost_before()

    @property
    def in_progress(self) -> bool:
        return not self.finished and not self.lost


def lost_before() -> datetime:
    """A deep check queued or running that has not moved since this moment counts as lost."""
    return timezone.now() - timedelta(minutes=settings.VERIMED.tasks.deep_check_lost_minutes)


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
