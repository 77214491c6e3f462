"""Asking, stopping a question, an article's JSON and the history: parse the request, check who asks, call a service
or selector, render. The answer page itself is one layer up (webapp/pages), with what watch and the deep check add."""

from __future__ import annotations

from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from generator.citations import DOC_CITATION_ID
from webapp.accounts.roles import RESEARCHER, REVIEWER, role_required, user_has_role
from webapp.corpus.models import Article
from webapp.qa import selectors
from webapp.qa.access import question_cancellable, question_or_404, questions_visible
from webapp.qa.forms import SearchSettingsForm
from webapp.qa.models import Question
from webapp.qa.services import admission, ending
from webapp.qa.threads import history_thread_starts, history_threads

HISTORY_PAGE_SIZE = 20


@require_http_methods(["GET", "POST"])
@role_required(RESEARCHER)
def ask(request: HttpRequest) -> HttpResponse:
    error = ""
    error_status = 400
    text = ""
    form = SearchSettingsForm(request.POST if request.method == "POST" else None)
    if request.method == "POST":
        text = request.POST.get("question", "")
        try:
            admission.question_validate(text=text)
        except admission.QuestionRejectedError as exc:
            error = str(exc)
        if form.is_valid() and not error:
            try:
                question = admission.question_create(
                    text=text, user=request.user, filters=form.filter_settings, retrieval=form.retrieval_settings
                )
            except admission.QuestionRejectedError as exc:  # e.g. the queue is full (503)
                error, error_status = str(exc), exc.http_status
            else:
                return redirect("question", question_id=question.pk)
    return _ask_page(request, form=form, text=text, error=error, status=error_status if error or form.errors else 200)


def _ask_page(request: HttpRequest, *, form: SearchSettingsForm, text: str, error: str, status: int) -> HttpResponse:
    """The ask page with the person's recent questions, `text` in the box and `error` above it."""
    own = selectors.questions_history(visible=questions_visible(user=request.user), user_id=request.user.pk)
    context = {
        "error": error,
        "text": text,
        "recent": list(own[:10]),
        "form": form,
        "max_question_chars": admission.question_max_chars(),
    }
    return render(request, "qa/ask.html", context, status=status)


@require_POST
@role_required(RESEARCHER)
def question_cancel(request: HttpRequest, question_id: int) -> HttpResponse:
    """Stop a question: the page's stop button posts here (a plain form without JavaScript, fetch with it)."""
    question = question_or_404(user=request.user, question_id=question_id)
    if not question_cancellable(user=request.user, question=question):
        raise Http404("No such question.")
    question = ending.question_cancel(question_id=question.pk)
    if "application/json" in request.headers.get("Accept", ""):
        return JsonResponse({"id": question.pk, "status": question.status, "cancel_requested": True})
    return redirect("question", question_id=question.pk)


@require_POST
@role_required(RESEARCHER)
def question_ask_again(request: HttpRequest, question_id: int) -> HttpResponse:
    """Ask a failed, stopped or lost question again: the page's Ask again button posts here. The new question
    passes the same limits as any other; a refusal is shown on the ask page, the question's text kept."""
    question = question_or_404(user=request.user, question_id=question_id)
    if not question_cancellable(user=request.user, question=question):
        raise Http404("No such question.")
    try:
        again = admission.question_ask_again(question=question, user=request.user)
    except admission.QuestionRejectedError as exc:
        return _ask_page(request, form=SearchSettingsForm(), text=question.text, error=str(exc), status=exc.http_status)
    return redirect("question", question_id=again.pk)


@require_GET
@role_required(RESEARCHER)
def article_json(request: HttpRequest, pmid: str) -> JsonResponse:
    """A cited abstract for the page's dialog; a cited page of a library document (`DOC:<id>:p<page>`) for its owner
    only: to anyone else it does not exist."""
    if DOC_CITATION_ID.fullmatch(pmid):
        try:
            return JsonResponse(selectors.library_page_payload(source_id=pmid, viewer_id=request.user.pk))
        except LookupError as exc:
            raise Http404("No such page in your library") from exc
    try:
        return JsonResponse(selectors.article_payload(pmid=pmid))
    except Article.DoesNotExist as exc:
        raise Http404("No such article") from exc


@require_GET
@role_required(RESEARCHER)
def history(request: HttpRequest) -> HttpResponse:
    """Your past questions, searchable; reviewers and admins may widen it to everyone's, which they can see."""
    can_see_all = user_has_role(request.user, REVIEWER)
    everyone = can_see_all and request.GET.get("everyone") == "1"
    search = request.GET.get("q", "")[:500]
    status = request.GET.get("status", "")
    if status not in Question.Status.values:
        status = ""
    visible = questions_visible(user=request.user)
    questions = selectors.questions_history(
        visible=visible,
        user_id=None if everyone else request.user.pk,
        search=search,
        status=status,
    )
    # Paged by thread: a follow-up is listed under the question its thread started with.
    starts = history_thread_starts(visible=visible, matching=questions)
    page = Paginator(starts, HISTORY_PAGE_SIZE).get_page(request.GET.get("page"))
    kept = request.GET.copy()  # page links keep the search and filters
    kept.pop("page", None)
    context = {
        "page": page,
        "threads": history_threads(starts=list(page.object_list), matching=questions),
        "matching_count": questions.count(),
        "search": search,
        "status": status,
        "statuses": Question.Status.choices,
        "everyone": everyone,
        "can_see_all": can_see_all,
        "query_string": kept.urlencode(),
    }
    return render(request, "qa/history.html", context)
