"""Who watches which answer, each re-check of a watched answer (what changed, if anything), and the notifications
that tell a watcher about the re-checks that found something."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from webapp.qa.models import Question


class Watch(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, related_name="watches", on_delete=models.CASCADE)
    question = models.ForeignKey(Question, related_name="watches", on_delete=models.CASCADE)
    created_at = models.DateTimeField(auto_now_add=True)
    # The stored verdicts are the answer's own; a paper's retraction status is not stored with the answer, so the
    # status of each cited paper is kept here for the first re-check to compare with.
    baseline = models.JSONField(
        default=dict, help_text="the cited papers' retraction status when watching began: {retraction: {pmid: status}}"
    )

    class Meta:
        ordering = ["-created_at"]
        constraints = [models.UniqueConstraint(fields=["user", "question"], name="unique_watch_per_user")]

    def __str__(self) -> str:
        return f"{self.user_id} watches question {self.question_id}"


class Recheck(models.Model):
    class Trigger(models.TextChoices):
        # The labels end "… after {label}" on the answer page.
        SYNC = "sync", "a PubMed update"
        REBUILD = "rebuild", "an index rebuild"
        MANUAL = "manual", "a re-check on request"

    question = models.ForeignKey(Question, related_name="rechecks", on_delete=models.CASCADE)
    # One re-check per question and cause: a redelivered task finds its row and does nothing.
    key = models.CharField(max_length=64, help_text="what caused it: `job-<id>` for an index job, `manual-<token>`")
    trigger = models.CharField(max_length=16, choices=Trigger.choices)
    # When the check's computation began, not when it was stored: the newest by this is the next one's baseline, so
    # a check computed earlier but stored later never is (webapp/watch/services.py question_recheck).
    at = models.DateTimeField(default=timezone.now)
    changes = models.JSONField(default=list, help_text="what differs from the previous check; empty: nothing changed")
    summary = models.CharField(max_length=300)
    state = models.JSONField(
        default=dict,
        help_text="what this check found (verdicts, cited papers' statuses, contradicting abstracts reported): the "
        "next re-check's baseline",
    )
    models_used = models.JSONField(default=dict, help_text="the verifier and evidence models this check ran")

    class Meta:
        ordering = ["-at", "-pk"]
        constraints = [models.UniqueConstraint(fields=["question", "key"], name="unique_recheck_per_cause")]
        indexes = [models.Index(fields=["question", "at"], name="recheck_question_at")]

    def __str__(self) -> str:
        return f"question {self.question_id} re-checked {self.at:%Y-%m-%d}: {self.summary}"


class Notification(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, related_name="notifications", on_delete=models.CASCADE)
    question = models.ForeignKey(Question, related_name="notifications", on_delete=models.CASCADE)
    recheck = models.ForeignKey(Recheck, related_name="notifications", on_delete=models.CASCADE)
    created_at = models.DateTimeField(auto_now_add=True)
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [models.UniqueConstraint(fields=["user", "recheck"], name="unique_notification_per_recheck")]
        # The header's unread count on every page: one COUNT over this index.
        indexes = [models.Index(fields=["user", "read_at"], name="notification_user_read")]

    def __str__(self) -> str:
        return f"notification {self.pk} for {self.user_id}: question {self.question_id}"

    @property
    def unread(self) -> bool:
        return self.read_at is None
