"""The owner's watch controls on the answer page and the notifications page: parse, check who asks, call a
service or selector, render."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from webapp.accounts.roles import RESEARCHER, role_required
from webapp.qa.access import question_or_404
from webapp.qa.models import Question
from webapp.qa.refusals import refused_page
from webapp.qa.services.admission import QuestionRejectedError
from webapp.watch import selectors, services
from webapp.watch.access import question_watchable

NOTIFICATIONS_PAGE_SIZE = 20


def _owned_question(request: HttpRequest, question_id: int) -> Question:
    """A question only its owner may watch; anyone else is told it does not exist, as for a question they cannot
    see."""
    return question_or_404(user=request.user, question_id=question_id, allowed=question_watchable)


def _back_to(question: Question) -> HttpResponse:
    return redirect("question", question_id=question.pk)


@require_POST
@role_required(RESEARCHER)
def question_watch(request: HttpRequest, question_id: int) -> HttpResponse:
    question = _owned_question(request, question_id)
    if question.status == Question.Status.DONE:  # an answer still being written has nothing to compare with yet
        services.watch_create(user=request.user, question=question)
    return _back_to(question)


@require_POST
@role_required(RESEARCHER)
def question_unwatch(request: HttpRequest, question_id: int) -> HttpResponse:
    question = _owned_question(request, question_id)
    services.watch_delete(user=request.user, question=question)
    return _back_to(question)


@require_POST
@role_required(RESEARCHER)
def question_recheck(request: HttpRequest, question_id: int) -> HttpResponse:
    question = _owned_question(request, question_id)
    if question.status == Question.Status.DONE and selectors.question_watched(question=question, user=request.user):
        try:
            services.recheck_request(question=question, user=request.user)
        except QuestionRejectedError as exc:  # the hourly limit (429), a full queue or a broker down (503)
            return refused_page(request, exc, question=question, heading="The re-check was not started")
        messages.info(request, "Re-checking the answer: reload the page in a minute to see what changed.")
    return _back_to(question)


@require_POST
@role_required(RESEARCHER)
def question_regenerate(request: HttpRequest, question_id: int) -> HttpResponse:
    """Ask the same question again, with the same search settings, as a new question."""
    question = _owned_question(request, question_id)
    try:
        fresh = services.question_regenerate(question=question, user=request.user)
    except QuestionRejectedError as exc:  # the hourly limit, a full queue
        messages.error(request, str(exc))
        return _back_to(question)
    return redirect("question", question_id=fresh.pk)


@require_GET
@role_required(RESEARCHER)
def notifications(request: HttpRequest) -> HttpResponse:
    page = Paginator(selectors.notifications_of(user=request.user), NOTIFICATIONS_PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    return render(request, "watch/notifications.html", {"page": page})


@require_POST
@role_required(RESEARCHER)
def notifications_read(request: HttpRequest) -> HttpResponse:
    """Mark the notifications posted (`notification` ids) read, or all of them when none is posted."""
    ids = [int(value) for value in request.POST.getlist("notification") if value.isdigit()]
    services.notifications_mark_read(user=request.user, notification_ids=ids or None)
    return redirect("notifications")
