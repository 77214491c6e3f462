"""Pages and JSON endpoints: parse the request, check who asks, call a service or selector, render."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from webapp.accounts.roles import RESEARCHER, role_required
from webapp.corpus.models import Article
from webapp.qa import selectors, services
from webapp.qa.access import question_cancellable, question_viewable, questions_visible
from webapp.qa.models import Question


@require_http_methods(["GET", "POST"])
@role_required(RESEARCHER)
def ask(request: HttpRequest) -> HttpResponse:
    error = ""
    text = ""
    if request.method == "POST":
        text = request.POST.get("question", "")
        try:
            question = services.question_create(text=text, user=request.user)
        except services.QuestionRejectedError as exc:
            error = str(exc)
        else:
            return redirect("question", question_id=question.pk)
    recent = list(questions_visible(user=request.user).filter(user_id=request.user.pk)[:10])
    context = {"error": error, "text": text, "recent": recent}
    return render(request, "qa/ask.html", context, status=400 if error else 200)


def _viewable_question(request: HttpRequest, question_id: int) -> Question:
    """A question the caller may see; one they may not see is reported as missing, so ids reveal nothing."""
    try:
        question = selectors.question_get(question_id=question_id)
    except Question.DoesNotExist as exc:
        raise Http404("No such question") from exc
    if not question_viewable(user=request.user, question=question):
        raise Http404("No such question")
    return question


@require_GET
@role_required(RESEARCHER)
def question_page(request: HttpRequest, question_id: int) -> HttpResponse:
    question = _viewable_question(request, question_id)
    return render(request, "qa/question.html", {"question": question})


@require_POST
@role_required(RESEARCHER)
def question_cancel(request: HttpRequest, question_id: int) -> HttpResponse:
    """Stop a question: the page's stop button posts here (a plain form without JavaScript, fetch with it)."""
    question = _viewable_question(request, question_id)
    if not question_cancellable(user=request.user, question=question):
        raise Http404("No such question")
    question = services.question_cancel(question_id=question.pk)
    if "application/json" in request.headers.get("Accept", ""):
        return JsonResponse({"id": question.pk, "status": question.status, "cancel_requested": True})
    return redirect("question", question_id=question.pk)


@require_GET
@role_required(RESEARCHER)
def question_json(request: HttpRequest, question_id: int) -> JsonResponse:
    return JsonResponse(selectors.question_payload(_viewable_question(request, question_id)))


@require_GET
@role_required(RESEARCHER)
def article_json(request: HttpRequest, pmid: str) -> JsonResponse:
    try:
        return JsonResponse(selectors.article_payload(pmid=pmid))
    except Article.DoesNotExist as exc:
        raise Http404("No such article") from exc
