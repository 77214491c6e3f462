"""The deep check's services: start (or run again), run, stop, fail; and a reviewer's flag on one of its claims.
The task calls `deep_check_run`; views, the API and the command call the rest."""

from __future__ import annotations

import time

from celery import signature
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.db import transaction
from django.utils import timezone

from verifier.claim_extraction import ClaimExtractor, extraction_budget
from verifier.claim_tree import REQUERY_ABSTRACTS, DeepChecker, DeepCheckStoppedError
from webapp.deepcheck.models import ClaimFlag, DeepCheck
from webapp.deepcheck.pipeline import HybridClaimSearch
from webapp.deepcheck.private_text import without_library_text
from webapp.qa.llm import llm_for
from webapp.qa.models import ModelAction, Question
from webapp.qa.pipeline import SITE_LANGUAGE_MODEL, SITE_VERIFIER, pipeline_rereading
from webapp.qa.services.admission import model_work_admit, model_work_withdraw
from webapp.qa.verification import answer_verifier, question_verification_inputs
from webapp.review.services import FlagRejectedError, flag_create
from webapp.task_publishing import task_publish_or_record

TASK_NAME = "deepcheck.run"  # named, not imported: the task module calls this one
MAX_COMMENT_CHARS = 3000  # the flag's comment also carries the claim, within the flag's own 4,000


class DeepCheckRejectedError(ValueError):
    """The deep check cannot start as asked; the message says why."""

    http_status = 409


def deep_check_start(
    *,
    question: Question,
    user: AbstractBaseUser | AnonymousUser | None = None,
    rerun: bool = False,
    enqueue: bool = True,
) -> DeepCheck:
    """Queue the question's deep check. One already queued or running is returned as it is; so is a finished one
    (done, failed, stopped, or lost: queued or running but unmoved for `VERIMED_DEEP_CHECK_LOST_MINUTES`) unless
    `rerun` asks for it to start again from nothing. Each start is model work, admitted as any is (the person's
    hourly limit on model actions, the queue valve: QuestionRejectedError), so a repeated click costs nothing.
    Without `enqueue` the caller runs it (the command's --in-process): nothing is queued, so the valve is not asked."""
    if question.status != Question.Status.DONE:
        raise DeepCheckRejectedError("Only an answered question can be deep-checked.")
    with transaction.atomic():
        # Starts of one question's check one after another (its row may not exist yet to lock).
        list(Question.objects.select_for_update().filter(pk=question.pk).values_list("pk"))
        check = DeepCheck.objects.filter(question=question).first()
        if check is not None and (check.in_progress or not rerun):
            return check
        # Before the row is stored: a refusal stores nothing, and the queue valve does not count this check itself.
        action_id = model_work_admit(user=user, kind=ModelAction.Kind.DEEP_CHECK, queued=enqueue)
        if check is None:
            check = DeepCheck(question=question)
        check.status, check.stage, check.progress = DeepCheck.Status.QUEUED, "", 0
        check.stop_requested, check.error, check.tree = False, "", None
        check.models_used, check.timings_ms = {}, {}
        check.requested_by = user if isinstance(user, User) else None
        check.settings = {"requery_abstracts": REQUERY_ABSTRACTS}
        # A new run: a task still queued for an earlier one (a lost check's, a stopped one's) finds it and does
        # nothing, so the check never runs twice at once.
        check.run, check.queued_at = check.run + 1, timezone.now()
        check.save()
        run = check.run
        if enqueue:
            transaction.on_commit(lambda: deep_check_enqueue(deep_check_id=check.pk, run=run, action_id=action_id))
    return check


def deep_check_enqueue(*, deep_check_id: int, run: int | None = None, action_id: int | None = None) -> bool:
    """Publish the check's task. When the broker cannot take it the check fails with the reason, and the start's
    model action (`action_id`) is withdrawn: work that never started is not counted against the person's limit."""

    def unreachable() -> None:
        model_work_withdraw(action_id=action_id)
        deep_check_fail(deep_check_id=deep_check_id, reason="The task queue is unreachable; please try again shortly.")

    return task_publish_or_record(
        signature(TASK_NAME, args=(deep_check_id,), kwargs={} if run is None else {"run": run}),
        what=f"deep check {deep_check_id}",
        record_unreachable=unreachable,
    )


def _progress(deep_check_id: int, stage: str, percent: int) -> None:
    DeepCheck.objects.filter(pk=deep_check_id).update(stage=stage, progress=percent, updated_at=timezone.now())


def _stop_asked(deep_check_id: int) -> bool:
    return DeepCheck.objects.filter(pk=deep_check_id, stop_requested=True).exists()


def deep_check_run(*, deep_check_id: int, run: int | None = None) -> None:
    """Extract, judge, search, consolidate (verifier.claim_tree); the tree and what made it are stored with the check.
    Raises DeepCheckStoppedError when a stop was asked for, before it starts or between two levels. A task queued
    for an earlier `run` than the check's, or for a check that has finished, does nothing."""
    check = DeepCheck.objects.select_related("question").get(pk=deep_check_id)
    if (run is not None and run != check.run) or check.status in (DeepCheck.Status.DONE, DeepCheck.Status.FAILED):
        return
    if check.stop_requested or check.status == DeepCheck.Status.STOPPED:
        raise DeepCheckStoppedError(f"deep check {deep_check_id} was stopped")
    DeepCheck.objects.filter(pk=deep_check_id).update(
        status=DeepCheck.Status.RUNNING, stage="", progress=0, error="", updated_at=timezone.now()
    )
    question = check.question
    # The question's own search settings (its claims are searched for as its sources were), the language model and
    # verifier the site runs now.
    pipeline = pipeline_rereading(question, site_parts=SITE_VERIFIER | SITE_LANGUAGE_MODEL)
    verifier = answer_verifier(pipeline)
    extractor = ClaimExtractor(llm_for(pipeline))
    checker = DeepChecker(extractor, verifier, HybridClaimSearch(pipeline), requery_abstracts=REQUERY_ABSTRACTS)
    inputs = question_verification_inputs(question)
    started = time.perf_counter()
    tree = checker.check(
        question.text,
        inputs.claims,
        inputs.abstracts,
        inputs.given,
        should_stop=lambda: _stop_asked(deep_check_id),
        progress=lambda stage, percent: _progress(deep_check_id, stage, percent),
    )
    total = round((time.perf_counter() - started) * 1000, 1)
    cited = sum(bool(claim.citations) for claim in inputs.claims)
    DeepCheck.objects.filter(pk=deep_check_id).exclude(status=DeepCheck.Status.STOPPED).update(
        status=DeepCheck.Status.DONE,
        stage="done",
        progress=100,
        tree=without_library_text(tree.as_dict()),
        models_used={
            "extractor": extractor.model_id,
            "verifier": verifier.classifier.model_id,
            "evidence": verifier.evidence.model_id,
        },
        timings_ms={**tree.timings_ms, "total": total},
        settings={"requery_abstracts": REQUERY_ABSTRACTS, "max_tokens": extraction_budget(cited)},
        updated_at=timezone.now(),
    )


def deep_check_stop(*, deep_check_id: int) -> DeepCheck:
    """Ask the check to stop: a queued one stops at once, a running one between two levels, a lost one at once (no
    worker is running it); a finished one is left."""
    with transaction.atomic():
        check = DeepCheck.objects.select_for_update().get(pk=deep_check_id)
        if check.finished:
            return check
        check.stop_requested = True
        if check.status == DeepCheck.Status.QUEUED or check.lost:
            check.status = DeepCheck.Status.STOPPED
        check.save(update_fields=["stop_requested", "status", "updated_at"])
    return check


def deep_check_mark_stopped(*, deep_check_id: int) -> None:
    DeepCheck.objects.filter(pk=deep_check_id).exclude(status=DeepCheck.Status.DONE).update(
        status=DeepCheck.Status.STOPPED, updated_at=timezone.now()
    )


def deep_check_fail(*, deep_check_id: int, reason: str) -> None:
    DeepCheck.objects.filter(pk=deep_check_id).exclude(status=DeepCheck.Status.STOPPED).update(
        status=DeepCheck.Status.FAILED, error=reason[:2000], updated_at=timezone.now()
    )


def claim_flag_create(
    *,
    deep_check: DeepCheck,
    sentence_position: int,
    claim_index: int,
    reason: str,
    comment: str = "",
    user: User | AnonymousUser | None,
) -> ClaimFlag:
    """A review flag on the claim's sentence that names the claim (its text opens the flag's comment, so the review
    queue shows it) and a row pointing it at the claim."""
    if deep_check.status != DeepCheck.Status.DONE or not deep_check.tree:
        raise FlagRejectedError("the deep check has no finished result to flag")
    sentence = next((s for s in deep_check.tree["sentences"] if s["position"] == sentence_position), None)
    if sentence is None:
        raise FlagRejectedError(f"the answer has no sentence {sentence_position}")
    if not 0 <= claim_index < len(sentence["claims"]):
        raise FlagRejectedError(f"sentence {sentence_position} has no claim {claim_index}")
    if len(comment) > MAX_COMMENT_CHARS:
        raise FlagRejectedError(f"comments on a claim are limited to {MAX_COMMENT_CHARS:,} characters")
    claim = sentence["claims"][claim_index]
    named = f"Deep-check claim {claim_index + 1} ({claim['verdict']}): {claim['text']}"
    with transaction.atomic():
        flag = flag_create(
            question=deep_check.question,
            sentence_position=sentence_position,
            reason=reason,
            comment=named + (f"\n\n{comment.strip()}" if comment.strip() else ""),
            user=user,
        )
        return ClaimFlag.objects.create(
            flag=flag,
            deep_check=deep_check,
            sentence_position=sentence_position,
            claim_index=claim_index,
            claim_text=claim["text"],
            claim_verdict=claim["verdict"],
        )
