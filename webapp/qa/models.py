"""Everything a question produced is stored: retrieval with both leg scores, the answer, sentences, verdicts."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone


class Question(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        RETRIEVING = "retrieving"
        GENERATING = "generating"
        VERIFYING = "verifying"
        DONE = "done"
        FAILED = "failed"
        CANCELLED = "cancelled"

    class Verification(models.TextChoices):
        VERIFIED = "verified"
        # The verifier could not run (its checkpoint is missing or corrupt, its server stayed down): the answer
        # and its citations stand, without verdicts. Not the "Unclear" verdict, which is the verifier's own.
        UNAVAILABLE = "unavailable"

    text = models.TextField()
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    error = models.TextField(blank=True)
    verification_status = models.CharField(
        max_length=16,
        choices=Verification.choices,
        blank=True,
        help_text="blank until the verify stage ends (and for a question that failed or stopped before it)",
    )
    verification_error = models.TextField(blank=True, help_text="why verification is unavailable")
    # Grows while the model writes, so the page can show tokens as they arrive (no pub/sub needed); once the
    # model is done it holds the answer with canonical, repaired citations.
    answer_text = models.TextField(blank=True)
    answer_raw = models.TextField(blank=True, help_text="the answer exactly as the model wrote it")
    cannot_answer = models.BooleanField(default=False)
    cancel_requested = models.BooleanField(default=False)
    first_token_at = models.DateTimeField(null=True, blank=True)
    semantic_coverage = models.FloatField(
        null=True,
        blank=True,
        help_text="share of the stored articles in the vector index when the question was retrieved (the rest were "
        "still being embedded: only the lexical leg could find them); null before retrieval",
    )
    context = models.JSONField(
        default=dict, help_text="what the model saw: PMIDs given, trimmed and dropped to fit, prompt tokens"
    )
    consensus = models.JSONField(
        null=True,
        blank=True,
        help_text="for a yes/no question, the verifier's verdicts on its claim against the first retrieved abstracts "
        "(webapp/qa/consensus.py); null for other questions, before verification, or when it could not be made",
    )
    closest_candidate = models.JSONField(
        null=True,
        blank=True,
        help_text="the PubMed candidate the dense search found closest to the question ({pmid, semantic_score}), "
        "wherever fusion ranked it: a yes/no question's consensus reads it beside the first retrieved; null before "
        "retrieval or when the dense leg returned nothing",
    )
    citation_notes = models.JSONField(
        default=list, help_text="citations repaired (a slip of 1-2 digits) or unmatched (never linked)"
    )
    settings = models.JSONField(default=dict)
    models_used = models.JSONField(default=dict)
    timings_ms = models.JSONField(default=dict)
    # A secret in the URL of a read-only link the owner hands out; None when not shared (revoking clears it).
    share_token = models.CharField(max_length=64, unique=True, null=True, blank=True, default=None)
    # A follow-up (webapp/qa/follow_ups.py) names the question it follows and its thread's first question. The first
    # question's own `thread` stays null, so a whole thread is one indexed query: pk = first or thread = first.
    parent = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="follow_ups",
        help_text="the question this one follows up",
    )
    thread = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="thread_follow_ups",
        help_text="the thread's first question; null for a question that follows none",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        # The queue's depth and a queued question's place are counts over unfinished statuses by age (`qa.queue`).
        indexes = [models.Index(fields=["status", "created_at"], name="question_status_created")]

    def __str__(self) -> str:
        return self.text[:80]

    @property
    def finished(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.FAILED, self.Status.CANCELLED)

    @property
    def lost(self) -> bool:
        """Queued or in a stage, unmoved for longer than a task may run, and nothing will finish it: no worker of the
        queue it waits on has beaten its heartbeat since (they died), or one has, but a question asked after this one
        last moved is already answered, so its task was passed over (dropped by a broker restart without
        persistence, or its worker died mid-stage). A question waiting its turn behind a backlog is not lost, however
        long it waits. (`questions_lost` is the same rule for a query.)"""
        if self.finished or self.updated_at >= question_lost_before():
            return False
        if _queue_of(self.status) not in queues_alive(since=question_lost_before()):
            return True
        return Question.objects.filter(created_at__gt=self.updated_at, status=Question.Status.DONE).exists()

    @property
    def shown_status(self) -> str:
        """The status the pages and the API show: a lost question reads as failed (and may be asked again)."""
        return self.Status.FAILED if self.lost else self.status

    @property
    def shown_error(self) -> str:
        return question_lost_reason() if self.lost else self.error

    @property
    def given_pmids(self) -> list[str]:
        """The PMIDs the model was shown; only these can be cited and linked."""
        return list(self.context.get("given", []))


class RetrievedDocument(models.Model):
    question = models.ForeignKey(Question, related_name="retrieved", on_delete=models.CASCADE)
    rank = models.PositiveSmallIntegerField()
    pmid = models.CharField(max_length=32)
    score = models.FloatField()
    lexical_score = models.FloatField(help_text="min-max normalised BM25 score; 0 if the lexical leg missed it")
    semantic_score = models.FloatField(help_text="min-max normalised cosine score; 0 if the dense leg missed it")
    lexical_raw = models.FloatField(null=True)
    semantic_raw = models.FloatField(null=True)
    rerank_score = models.FloatField(
        null=True, help_text="the reranker's score of the abstract's best passage; null when it was not reranked"
    )

    class Meta:
        ordering = ["question", "rank"]
        constraints = [models.UniqueConstraint(fields=["question", "rank"], name="unique_rank_per_question")]

    def __str__(self) -> str:
        return f"#{self.rank} PMID {self.pmid}"


class AnswerSentence(models.Model):
    question = models.ForeignKey(Question, related_name="sentences", on_delete=models.CASCADE)
    position = models.PositiveSmallIntegerField()
    text = models.TextField(help_text="as the model wrote it, citations included")
    display_text = models.TextField(help_text="without citation markup")
    verdict = models.CharField(
        max_length=16, help_text="overall verdict across the cited abstracts (UNCLEAR when every one is)"
    )
    confidence = models.FloatField(null=True, blank=True, help_text="the strongest confidence behind the verdict")

    class Meta:
        ordering = ["question", "position"]
        constraints = [models.UniqueConstraint(fields=["question", "position"], name="unique_sentence_position")]

    def __str__(self) -> str:
        return f"[{self.verdict}] {self.display_text[:80]}"


class CitationVerdict(models.Model):
    sentence = models.ForeignKey(AnswerSentence, related_name="citations", on_delete=models.CASCADE)
    position = models.PositiveSmallIntegerField()
    pmid = models.CharField(max_length=32)
    label = models.CharField(max_length=16, help_text="what the page shows; UNCLEAR when the confidence is too low")
    confidence = models.FloatField(
        null=True, blank=True, help_text="the classifier's calibrated probability of its leaning"
    )
    # What an Unclear verdict hides, and what calibration changed; blank and empty in rows from before both.
    leaning = models.CharField(max_length=16, blank=True, help_text="the model's label, kept when shown as UNCLEAR")
    raw_label = models.CharField(max_length=16, blank=True, help_text="the plain argmax before calibration")
    probabilities = models.JSONField(default=dict, blank=True, help_text="calibrated probability per label")
    raw_probabilities = models.JSONField(default=dict, blank=True, help_text="the plain softmax per label")
    evidence_sentences = models.JSONField(default=list, help_text="indices of the abstract sentences shown as evidence")
    evidence_spans = models.JSONField(default=list, help_text="[start, end] character offsets into the abstract")
    judge_output = models.TextField(blank=True, help_text="what the classifier said (probabilities or LLM text)")

    class Meta:
        ordering = ["sentence", "position"]

    def __str__(self) -> str:
        return f"PMID {self.pmid}: {self.label}"


class FollowUpDraft(models.Model):
    """A follow-up on its way to becoming a question: what the person typed, the standalone question proposed for
    it (rewritten off the web process), and the question asked once they confirm it."""

    class Status(models.TextChoices):
        REWRITING = "rewriting"
        PROPOSED = "proposed", "Proposed by the model"
        FALLBACK = "fallback", "Fallback: the rewrite could not be made"
        ASKED = "asked"

    parent = models.ForeignKey(Question, related_name="follow_up_drafts", on_delete=models.CASCADE)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    text = models.TextField(help_text="the follow-up as typed")
    proposal = models.TextField(help_text="the standalone question offered for editing; the fallback until rewritten")
    note = models.TextField(blank=True, help_text="why the rewrite could not be made")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.REWRITING)
    model = models.CharField(max_length=200, blank=True, help_text="the language model that rewrote it")
    asked = models.ForeignKey(
        Question, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", help_text="asked from it"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.get_status_display()}: {self.text[:80]}"


class ModelAction(models.Model):
    """Model work a person started besides asking (a question is its own row): counted with their questions against
    `VERIMED_MODEL_ACTIONS_PER_HOUR`. A row of its own per start, because the work's own rows do not say how often
    it was started: a deep check is run again in place, a new follow-up replaces the draft not asked yet, and a
    re-check is stored only once it has run."""

    class Kind(models.TextChoices):
        REWRITE = "rewrite", "a follow-up's rewrite"
        DEEP_CHECK = "deep_check", "a deep check"
        RECHECK = "recheck", "a re-check"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, related_name="+", on_delete=models.CASCADE)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["user", "created_at"], name="model_action_user_created")]

    def __str__(self) -> str:
        return f"{self.user_id} started {self.get_kind_display()} at {self.created_at:%Y-%m-%d %H:%M}"


class WorkerHeartbeat(models.Model):
    """A Celery worker's sign of life, written every HEARTBEAT_SECONDS by a thread of its main process
    (webapp/qa/heartbeat.py): how a question waiting in a backlog is told from one whose worker is gone."""

    name = models.CharField(max_length=255, unique=True, help_text="the worker's node name, e.g. llm@host")
    queues = models.CharField(max_length=255, help_text="the queues it consumes, comma-separated")
    beat_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.name} ({self.queues}) at {self.beat_at:%Y-%m-%d %H:%M:%S}"


def queues_alive(*, since: datetime) -> set[str]:
    """The queues some worker has consumed from with a heartbeat since `since`."""
    rows = WorkerHeartbeat.objects.filter(beat_at__gte=since).values_list("queues", flat=True)
    return {queue for row in rows for queue in row.split(",") if queue}


# The queue each unfinished status waits on (CELERY_TASK_ROUTES): retrieval and generation on `llm`, verification on
# `verify`.
_WAITS_ON = {Question.Status.VERIFYING: "verify"}
_LLM_STAGES = (Question.Status.QUEUED, Question.Status.RETRIEVING, Question.Status.GENERATING)


def _queue_of(status: str) -> str:
    return _WAITS_ON.get(Question.Status(status), "llm")


def questions_lost() -> models.Q:
    """`Question.lost` as a filter over unfinished questions: one heartbeat query here, one EXISTS per row there."""
    cutoff = question_lost_before()
    alive = queues_alive(since=cutoff)
    passed_over = models.Q(
        models.Exists(
            Question.objects.filter(created_at__gt=models.OuterRef("updated_at"), status=Question.Status.DONE)
        )
    )
    either = models.Q()
    for queue, statuses in (("llm", _LLM_STAGES), ("verify", tuple(_WAITS_ON))):
        either |= models.Q(status__in=statuses) & (passed_over if queue in alive else models.Q())
    return models.Q(updated_at__lt=cutoff) & either


def question_lost_before() -> datetime:
    """A question queued or in a stage that has not moved since this moment counts as lost."""
    return timezone.now() - timedelta(minutes=settings.VERIMED.tasks.question_lost_minutes)


def question_lost_reason() -> str:
    minutes = settings.VERIMED.tasks.question_lost_minutes
    return (
        f"it had not moved for {minutes} minutes and nothing was going to finish it, so it was lost (its worker "
        "stopped or restarted, or the task queue dropped it). "
        "Ask it again to start over."
    )
