"""Watching an answer, re-checking it and telling its watchers; and asking it again. Views, the re-check task and
the corpus's finished-job signal call these; reads live in `selectors`."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from celery import signature
from django.db import IntegrityError, transaction
from django.utils import timezone

from webapp.accounts.roles import AnyUser
from webapp.corpus.models import IndexJob
from webapp.qa.models import CitationVerdict, ModelAction, Question
from webapp.qa.pipeline import stored_pipeline
from webapp.qa.services.admission import QuestionRejectedError, model_work_admit, model_work_withdraw, question_create
from webapp.qa.verification import question_verification_inputs
from webapp.task_publishing import task_publish_or_record
from webapp.watch.changes import AnswerState, answer_changes, changes_json, changes_summary, next_state, verdict_key
from webapp.watch.checking import answer_check, cited_pmids, retraction_statuses
from webapp.watch.models import Notification, Recheck, Watch

logger = logging.getLogger(__name__)

# Named, not imported: webapp/watch/tasks.py calls this module (as the question pipeline names its stages).
RECHECK_TASK = "watch.question_recheck"
# Jobs that read PubMed files into the corpus; a rebuild re-indexes what is stored.
_FILE_JOBS = (IndexJob.Kind.UPDATES, IndexJob.Kind.BASELINE, IndexJob.Kind.FILES)


def _signed_in(user: AnyUser) -> int:
    """The person's id; the views let nobody else this far."""
    if user.pk is None:
        raise PermissionError("only a signed-in person watches answers")
    return int(user.pk)


def watch_create(*, user: AnyUser, question: Question) -> Watch:
    """Watch the answer; watching again changes nothing. The cited papers' status now is what the first re-check
    compares with (the answer's own verdicts are stored with it)."""
    inputs = question_verification_inputs(question)
    baseline = {"retraction": retraction_statuses(pmids=cited_pmids(inputs.claims, inputs.given))}
    watch, _ = Watch.objects.get_or_create(user_id=_signed_in(user), question=question, defaults={"baseline": baseline})
    return watch


def watch_delete(*, user: AnyUser, question: Question) -> None:
    """Stop watching; the re-checks made so far stay on the answer."""
    Watch.objects.filter(user_id=_signed_in(user), question=question).delete()


class RecheckNotQueuedError(QuestionRejectedError):
    """The broker could not take the re-check: nothing was started (nor counted against the person's limit), and
    the page answers as it does for a full queue."""

    http_status = 503
    retry_after_seconds = 60


def _publish(
    *, question_id: int, trigger: Recheck.Trigger, key: str, unreachable: Callable[[], None], retry: bool = True
) -> bool:
    """Hand one re-check to the workers; False, logged with the key and question, when the broker cannot take it."""
    return task_publish_or_record(
        signature(RECHECK_TASK, args=(question_id, str(trigger), key)),
        what=f"re-check {key} of question {question_id}",
        record_unreachable=unreachable,
        retry=retry,
    )


def recheck_request(*, question: Question, user: AnyUser) -> str:
    """Re-check a watched answer now (the owner's "Re-check now"); the key that the re-check will be stored under.
    Each click is a search and a verification: model work, admitted as any is (the person's hourly limit on model
    actions, the queue valve: QuestionRejectedError). A broker that is down raises RecheckNotQueuedError, and the
    click is not counted."""
    key = f"manual-{uuid.uuid4().hex}"
    unqueued: list[RecheckNotQueuedError] = []

    def withdraw(action_id: int | None) -> None:
        # Nothing waits on a re-check that was never queued: the person is told, and the click is not counted.
        model_work_withdraw(action_id=action_id)
        unqueued.append(
            RecheckNotQueuedError(
                "The task queue is unreachable, so the answer was not re-checked. Please try again shortly."
            )
        )

    with transaction.atomic():
        action_id = model_work_admit(user=user, kind=ModelAction.Kind.RECHECK)
        # Published once the admission is committed: in a request (autocommit) that is before this returns.
        transaction.on_commit(
            lambda: _publish(
                question_id=question.pk,
                trigger=Recheck.Trigger.MANUAL,
                key=key,
                unreachable=lambda: withdraw(action_id),
            )
        )
    if unqueued:
        raise unqueued[0]
    return key


def _job_trigger(*, job_id: int, kind: str, status: str) -> Recheck.Trigger | None:
    """A rebuild that switched to its new index, or a file job that indexed at least one file (a job that failed or
    was cancelled part-way has still changed the corpus by the files it finished)."""
    if kind == IndexJob.Kind.REBUILD:
        return Recheck.Trigger.REBUILD if status == IndexJob.Status.DONE else None
    if kind in _FILE_JOBS and IndexJob.objects.filter(pk=job_id, files_done__gt=0).exists():
        return Recheck.Trigger.SYNC
    return None


@dataclass(frozen=True)
class RechecksQueued:
    queued: int
    failed: int  # the broker could not take them; each is logged, and the next job that changes the corpus tries again


def rechecks_enqueue_after_job(*, job_id: int, kind: str, status: str) -> RechecksQueued:
    """One re-check per watched answer once a job has changed the corpus (the corpus's signal calls this once the
    job's finish is committed, so each is published at once). Every one is tried whatever became of the one before:
    a broker that fails for one answer must not cost the others theirs."""
    trigger = _job_trigger(job_id=job_id, kind=kind, status=status)
    if trigger is None:
        return RechecksQueued(queued=0, failed=0)
    question_ids = sorted(
        set(Watch.objects.filter(question__status=Question.Status.DONE).values_list("question_id", flat=True))
    )
    failed = 0
    for question_id in question_ids:
        # Once the broker has refused one even after the publishing retries, the rest get one attempt each: a broker
        # that is down would otherwise hold the job's finish for the retries' pauses once per watched answer.
        failed += not _publish(
            question_id=question_id, trigger=trigger, key=f"job-{job_id}", unreachable=lambda: None, retry=not failed
        )
    queued = len(question_ids) - failed
    if queued:
        logger.info("job %s: %d watched answers queued for a re-check", job_id, queued)
    if failed:
        logger.error(
            "job %s: %d of %d watched answers could not be queued for a re-check (the next job that changes the "
            "corpus re-checks them)",
            job_id,
            failed,
            len(question_ids),
        )
    return RechecksQueued(queued=queued, failed=failed)


def _previous_state(question: Question) -> AnswerState:
    """The last re-check's state; before the first, the answer's stored verdicts and the status of its cited
    papers when watching began."""
    last = Recheck.objects.filter(question=question).order_by("-at", "-pk").first()
    if last is not None:
        return AnswerState.from_json(last.state)
    stored = CitationVerdict.objects.filter(sentence__question=question).values_list(
        "sentence__position", "pmid", "label"
    )
    first_watch = Watch.objects.filter(question=question).order_by("created_at", "pk").first()
    retraction = first_watch.baseline.get("retraction", {}) if first_watch is not None else {}
    return AnswerState(
        verdicts={verdict_key(position, pmid): label for position, pmid, label in stored}, retraction=retraction
    )


def question_recheck(*, question_id: int, trigger: str, key: str) -> Recheck | None:
    """Check a watched, answered question again without rewriting it, and store what changed since the last check.

    Always stores one re-check (an empty change list: nothing changed) and notifies each watcher when something
    changed. Once per `key`: run again (a redelivered task, a worker killed half-way) it returns the stored re-check,
    or, if none was stored, makes it. None when the question is not answered or nobody watches it any more, or when
    a check begun after this one was stored while this one ran (this one is stale: it is discarded).

    A re-check is dated when its computation began, and each is compared with the newest before it by that date: a
    check computed earlier but stored later (a slow sync beside a "Re-check now") can never become the baseline.
    """
    stored = Recheck.objects.filter(question_id=question_id, key=key).first()
    if stored is not None:
        return stored
    question = Question.objects.filter(pk=question_id, status=Question.Status.DONE).first()
    if question is None or not Watch.objects.filter(question_id=question_id).exists():
        return None
    started = timezone.now()  # before anything is read: what this check saw is at least this recent
    check = answer_check(question=question)  # the slow part, outside any transaction
    try:
        with transaction.atomic():
            # Re-checks of one question are stored one after another, each against the one before.
            list(Question.objects.select_for_update().filter(pk=question_id).values_list("pk"))
            stored = Recheck.objects.filter(question_id=question_id, key=key).first()
            if stored is not None:
                return stored
            if Recheck.objects.filter(question_id=question_id, at__gt=started).exists():
                # Stored, it would tell the newer check's news undone (a false "no longer flagged") and be what the
                # next one compares with. Its key stays free: a redelivery computes afresh.
                logger.info("re-check %s of question %s discarded: a check begun after it is stored", key, question_id)
                return None
            previous = _previous_state(question)
            changes = answer_changes(previous=previous, current=check.state, found=check.found, reading=check.reading)
            recheck = Recheck.objects.create(
                question=question,
                key=key,
                trigger=trigger,
                at=started,
                changes=changes_json(changes),
                summary=changes_summary(changes),
                state=next_state(previous=previous, current=check.state, found=check.found).to_json(),
                models_used=check.models,
            )
            if changes:
                watchers = Watch.objects.filter(question=question).values_list("user_id", flat=True)
                Notification.objects.bulk_create(
                    Notification(user_id=user_id, question=question, recheck=recheck) for user_id in watchers
                )
    except IntegrityError:
        # Another run with the same key stored it between our look and our insert.
        return Recheck.objects.get(question_id=question_id, key=key)
    return recheck


def notifications_mark_read(*, user: AnyUser, notification_ids: list[int] | None = None) -> int:
    """Mark the person's unread notifications read (only those given, if any); how many were."""
    unread = Notification.objects.filter(user_id=_signed_in(user), read_at__isnull=True)
    if notification_ids is not None:
        unread = unread.filter(pk__in=notification_ids)
    return unread.update(read_at=timezone.now())


def question_regenerate(*, question: Question, user: AnyUser) -> Question:
    """Ask the same text again with the same search settings, as a new question (the watched one is left as it is);
    the ask page's rules apply (length, rate and queue limits: QuestionRejectedError)."""
    stored = stored_pipeline(question)
    return question_create(text=question.text, user=user, filters=stored.filters, retrieval=stored.retrieval)
