"""The library pages: the list with its upload form, a document's passages, its file, its deletion. Parse, check who
asks, call a service or selector, render."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from webapp.accounts.roles import RESEARCHER, role_required
from webapp.library import selectors, services
from webapp.library.access import document_or_404
from webapp.library.admission import DocumentRefusedError
from webapp.library.models import Document
from webapp.library.uploads import UploadOutcome, uploads_from

_FILE_TYPES: dict[str, str] = {Document.Kind.PDF: "application/pdf", Document.Kind.JATS: "application/xml"}


@require_GET
@role_required(RESEARCHER)
def library(request: HttpRequest) -> HttpResponse:
    count, size = selectors.library_usage(owner_id=request.user.pk)
    context = {
        "documents": selectors.documents_of(user=request.user),
        "usage": {"count": count, "bytes": size},
        "limits": settings.VERIMED.limits,
    }
    return render(request, "library/library.html", context)


@require_POST
@role_required(RESEARCHER)
def library_upload(request: HttpRequest) -> HttpResponse:
    """One file or many (`file`). The page's script sends each file alone and asks for JSON, to show a progress bar
    per file; without the script the form posts them all and comes back to the list with a message for each."""
    outcomes = uploads_from(owner=request.user, files=request.FILES.getlist("file"))
    if "application/json" in request.headers.get("Accept", ""):
        return _json_outcomes(outcomes)
    if not outcomes:
        messages.error(request, "Choose a PDF or JATS XML file to upload.")
    for outcome in outcomes:
        if outcome.refusal is not None:
            messages.error(request, outcome.refusal)
        elif outcome.created:
            messages.success(request, f"{outcome.filename}: added to your library.")
        else:
            messages.info(request, f"{outcome.filename}: already in your library.")
    return redirect("library")


def _json_outcomes(outcomes: list[UploadOutcome]) -> JsonResponse:
    results = [
        {
            "filename": outcome.filename,
            "outcome": outcome.label,
            "detail": outcome.refusal,
            "url": reverse("library-document", args=[outcome.document.pk]) if outcome.document else None,
        }
        for outcome in outcomes
    ]
    if not outcomes:
        return JsonResponse({"detail": "No file was sent (the form field is `file`).", "results": []}, status=400)
    status = outcomes[0].http_status if len(outcomes) == 1 else 200
    return JsonResponse({"results": results}, status=status)


@require_GET
@role_required(RESEARCHER)
def library_document(request: HttpRequest, document_id: int) -> HttpResponse:
    document = document_or_404(user=request.user, document_id=document_id)
    context = {
        "document": document,
        "passages": selectors.passages_of_document(document=document),
        "may_index_again": services.document_index_may_be_queued(document=document),
    }
    return render(request, "library/document.html", context)


@require_GET
@role_required(RESEARCHER)
def library_document_view(request: HttpRequest, document_id: int) -> HttpResponse:
    """A PDF shown at one page (`page`), with one passage's words highlighted (`passage`, its ordinal): where a
    citation of the document leads. A JATS document has no pages: its passage is highlighted on the document page."""
    document = document_or_404(user=request.user, document_id=document_id)
    passage = selectors.passage_of_document(document=document, ordinal=_number(request.GET.get("passage")))
    if document.kind != Document.Kind.PDF:
        anchor = f"#passage-{passage.ordinal}" if passage is not None else ""
        return redirect(reverse("library-document", args=[document.pk]) + anchor)
    page = _number(request.GET.get("page")) or (passage.page if passage is not None and passage.page else 1)
    # Sentences to mark besides (or instead of) a passage: the evidence an answer's dialog links here with. Shown
    # back only as text to compare with, escaped; a few, of sentence length.
    highlights = [text[:MAX_HIGHLIGHT_CHARS] for text in request.GET.getlist("highlight")[:MAX_HIGHLIGHTS] if text]
    context = {
        "document": document,
        "page": min(max(page, 1), document.pages or 1),
        "passage": passage,
        "highlights": highlights,
    }
    return render(request, "library/viewer.html", context)


MAX_HIGHLIGHTS = 10
MAX_HIGHLIGHT_CHARS = 1000


def _number(value: str | None) -> int | None:
    return int(value) if value is not None and value.isdigit() and len(value) <= 9 else None


@require_GET
@role_required(RESEARCHER)
def library_document_file(request: HttpRequest, document_id: int) -> HttpResponse:
    """The file as uploaded. It is the uploader's own, but still untrusted: never rendered by the site's origin with
    scripting (a sandboxing CSP, no sniffing), and XML only as a download, since a browser runs script in XHTML."""
    document = document_or_404(user=request.user, document_id=document_id)
    response = HttpResponse(selectors.document_bytes(document=document), content_type=_FILE_TYPES[document.kind])
    disposition = "inline" if document.kind == Document.Kind.PDF else "attachment"
    response["Content-Disposition"] = f'{disposition}; filename="document-{document.pk}.{document.kind}"'
    response["Content-Security-Policy"] = "sandbox"
    response["X-Content-Type-Options"] = "nosniff"
    return response


@require_POST
@role_required(RESEARCHER)
def library_document_delete(request: HttpRequest, document_id: int) -> HttpResponse:
    document = document_or_404(user=request.user, document_id=document_id)
    try:
        services.document_delete(document=document)
    except DocumentRefusedError as exc:  # the task queue is down: nothing changed
        messages.error(request, str(exc))
        return redirect("library-document", document_id=document.pk)
    messages.success(request, f"{document.filename}: deleted, with every passage read from it.")
    return redirect("library")


@require_POST
@role_required(RESEARCHER)
def library_document_index(request: HttpRequest, document_id: int) -> HttpResponse:
    """Queue the indexing again, for a document whose indexing failed or was never queued."""
    document = document_or_404(user=request.user, document_id=document_id)
    try:
        queued = services.document_index_again(document=document)
    except DocumentRefusedError as exc:  # the hourly limit, or the site is busy
        messages.error(request, f"{document.filename}: {exc}")
        return redirect("library-document", document_id=document.pk)
    if queued:
        messages.info(request, f"{document.filename}: queued to be indexed; reload the page in a minute.")
    else:
        messages.info(request, f"{document.filename}: already searchable, or already queued to be indexed.")
    return redirect("library-document", document_id=document.pk)
