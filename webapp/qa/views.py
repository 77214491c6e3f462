"""Pages and JSON endpoints: parse the request, call a service or selector, render."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from webapp.corpus.models import Article
from webapp.qa import selectors, services
from webapp.qa.models import Question


@require_http_methods(["GET", "POST"])
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
    context = {"error": error, "text": text, "recent": selectors.question_recent()}
    return render(request, "qa/ask.html", context, status=400 if error else 200)


def _question_or_404(question_id: int) -> Question:
    try:
        return selectors.question_get(question_id=question_id)
    except Question.DoesNotExist as exc:
        raise Http404("No such question") from exc


@require_GET
def question_page(request: HttpRequest, question_id: int) -> HttpResponse:
    return render(request, "qa/question.html", {"question": _question_or_404(question_id)})


@require_POST
def question_cancel(request: HttpRequest, question_id: int) -> HttpResponse:
    """Stop a question: the page's stop button posts here (a plain form without JavaScript, fetch with it)."""
    try:
        question = services.question_cancel(question_id=question_id)
    except Question.DoesNotExist as exc:
        raise Http404("No such question") from exc
    if "application/json" in request.headers.get("Accept", ""):
        return JsonResponse({"id": question.pk, "status": question.status, "cancel_requested": True})
    return redirect("question", question_id=question.pk)


@require_GET
def question_json(request: HttpRequest, question_id: int) -> JsonResponse:
    return JsonResponse(selectors.question_payload(_question_or_404(question_id)))


@require_GET
def article_json(request: HttpRequest, pmid: str) -> JsonResponse:
    try:
        return JsonResponse(selectors.article_payload(pmid=pmid))
    except Article.DoesNotExist as exc:
        raise Http404("No such article") from exc
