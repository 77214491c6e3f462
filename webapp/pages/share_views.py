"""Share links and exports: the owner shares or revokes; a link's holder reads and exports; views parse and render."""

from __future__ import annotations

from collections.abc import Callable

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from webapp.accounts.roles import RESEARCHER, role_required
from webapp.pages.answer_context import question_context
from webapp.pages.exports import ExportedAnswer, answer_markdown, question_export
from webapp.pages.reference_files import references_bibtex, references_ris
from webapp.qa import selectors, sharing
from webapp.qa.access import question_or_404, question_shareable
from webapp.qa.models import Question

# kind -> (file suffix, content type, writer)
EXPORTS: dict[str, tuple[str, str, Callable[[ExportedAnswer], str]]] = {
    "md": ("md", "text/markdown; charset=utf-8", answer_markdown),
    "bib": ("bib", "application/x-bibtex; charset=utf-8", lambda answer: references_bibtex(answer.references)),
    "ris": (
        "ris",
        "application/x-research-info-systems; charset=utf-8",
        lambda answer: references_ris(answer.references),
    ),
}


def _owned_question(request: HttpRequest, question_id: int) -> Question:
    return question_or_404(user=request.user, question_id=question_id, allowed=question_shareable)


@require_POST
@role_required(RESEARCHER)
def question_share(request: HttpRequest, question_id: int) -> HttpResponse:
    sharing.question_share(question_id=_owned_question(request, question_id).pk)
    return redirect("question", question_id=question_id)


@require_POST
@role_required(RESEARCHER)
def question_unshare(request: HttpRequest, question_id: int) -> HttpResponse:
    sharing.question_unshare(question_id=_owned_question(request, question_id).pk)
    return redirect("question", question_id=question_id)


def _shared_question(token: str) -> Question:
    try:
        return selectors.question_get_shared(token=token)
    except Question.DoesNotExist as exc:
        raise Http404("No such link; it may have been revoked") from exc


@require_GET
@role_required(RESEARCHER)
def question_shared(request: HttpRequest, token: str) -> HttpResponse:
    question = _shared_question(token)
    return render(request, "qa/question.html", question_context(request, question, read_only=True))


@require_GET
@role_required(RESEARCHER)
def question_shared_json(request: HttpRequest, token: str) -> JsonResponse:
    return JsonResponse(selectors.question_payload(_shared_question(token), viewer_id=request.user.pk))


def _export(question: Question, kind: str) -> HttpResponse:
    if question.status != Question.Status.DONE:
        return HttpResponse("The answer is not finished yet.", status=409, content_type="text/plain; charset=utf-8")
    suffix, content_type, write = EXPORTS[kind]
    body = write(question_export(question=question))
    response = HttpResponse(body, content_type=content_type)
    name = "answer" if kind == "md" else "references"
    response["Content-Disposition"] = f'attachment; filename="verimed-{question.pk}-{name}.{suffix}"'
    return response


def _exporter(kind: str) -> tuple[Callable[..., HttpResponse], Callable[..., HttpResponse]]:
    """The owner's (by id) and the share link's (by token) download views for one format."""

    @require_GET
    @role_required(RESEARCHER)
    def by_id(request: HttpRequest, question_id: int) -> HttpResponse:
        return _export(question_or_404(user=request.user, question_id=question_id), kind)

    @require_GET
    @role_required(RESEARCHER)
    def by_token(request: HttpRequest, token: str) -> HttpResponse:
        return _export(_shared_question(token), kind)

    return by_id, by_token


export_markdown, shared_export_markdown = _exporter("md")
export_bibtex, shared_export_bibtex = _exporter("bib")
export_ris, shared_export_ris = _exporter("ris")
