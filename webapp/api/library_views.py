"""The API of a researcher's library: upload, list, read and delete their own documents. Parse, check who asks, call
a service or selector, respond (as webapp/api/views.py). A document is its owner's only: to anyone else it is 404."""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from webapp.api.permissions import RESEARCHER_ONLY
from webapp.api.serializers import common, library
from webapp.library import selectors, services
from webapp.library.access import document_or_404
from webapp.library.admission import DocumentRefusedError
from webapp.library.models import Document
from webapp.library.uploads import UploadOutcome, uploads_from

_MISSING = OpenApiResponse(common.DetailSerializer, description="No such document, or not one of yours.")


def _own_document(request: Request, document_id: int) -> Document:
    try:
        return document_or_404(user=request.user, document_id=document_id)
    except Http404:
        raise NotFound("No such document.") from None


class DocumentListView(GenericAPIView):
    permission_classes = RESEARCHER_ONLY
    serializer_class = library.DocumentSerializer
    parser_classes = [MultiPartParser]

    @extend_schema(summary="Your library's documents, newest first", responses=library.DocumentSerializer(many=True))
    def get(self, request: Request) -> Response:
        page = self.paginate_queryset(selectors.documents_of(user=request.user))
        return self.get_paginated_response(self.get_serializer(page, many=True).data)

    @extend_schema(
        summary="Add papers to your library",
        description="Each `file` part is read on its own: a refused file costs the others nothing and leaves no "
        "trace. The same bytes uploaded again return the document already there. Limits: "
        "`VERIMED_LIBRARY_FILE_MAX_BYTES`, `VERIMED_LIBRARY_MAX_PAGES`, `VERIMED_LIBRARY_MAX_DOCUMENTS`, "
        "`VERIMED_LIBRARY_MAX_BYTES`, `VERIMED_LIBRARY_ACTIONS_PER_HOUR` (docs/configuration.md). The status is 201 "
        "when a file was added, 200 when all were there already, and a refusal's own status (400 unreadable, 413 too "
        "large, 403 library full, 429 hourly limit, 503 site busy) when every file was refused.",
        request={"multipart/form-data": library.DocumentUploadSerializer},
        responses={
            200: library.UploadResultsSerializer,
            201: library.UploadResultsSerializer,
            400: library.UploadResultsSerializer,
            403: OpenApiResponse(
                common.DetailSerializer,
                description="Every file was refused because your library is full (its documents or bytes); the body "
                "also lists each file's `results`.",
            ),
            413: library.UploadResultsSerializer,
            429: OpenApiResponse(
                library.UploadResultsSerializer,
                description="`VERIMED_LIBRARY_ACTIONS_PER_HOUR` uploads and indexings in the last hour; `Retry-After` "
                "says how many seconds to wait.",
            ),
            503: OpenApiResponse(
                library.UploadResultsSerializer,
                description="The site is busy (`VERIMED_MAX_QUEUED_QUESTIONS` questions, deep checks and library "
                "documents waiting); try again in a minute.",
            ),
        },
    )
    def post(self, request: Request) -> Response:
        files = request.FILES.getlist("file")
        if not files:
            body = {"detail": "Send one or more files as `file` parts of a multipart form.", "results": []}
            return Response(body, status=status.HTTP_400_BAD_REQUEST)
        outcomes = uploads_from(owner=request.user, files=files)
        results = [_result(outcome, request) for outcome in outcomes]
        accepted = [outcome for outcome in outcomes if outcome.refusal is None]
        if not accepted:
            first = outcomes[0]
            retry_after = {} if first.retry_after_seconds is None else {"Retry-After": str(first.retry_after_seconds)}
            return Response(
                {"detail": first.refusal, "results": results}, status=first.http_status, headers=retry_after
            )
        code = status.HTTP_201_CREATED if any(outcome.created for outcome in accepted) else status.HTTP_200_OK
        return Response({"results": results}, status=code)


def _result(outcome: UploadOutcome, request: Request) -> dict[str, object]:
    document = (
        library.DocumentSerializer(outcome.document, context={"request": request}).data if outcome.document else None
    )
    return {
        "filename": outcome.filename,
        "outcome": outcome.label,
        "status": outcome.http_status,
        "detail": outcome.refusal,
        "document": document,
    }


class DocumentDetailView(GenericAPIView):
    permission_classes = RESEARCHER_ONLY
    serializer_class = library.DocumentDetailSerializer

    @extend_schema(
        summary="One of your documents with its passages",
        responses={200: library.DocumentDetailSerializer, 404: _MISSING},
    )
    def get(self, request: Request, document_id: int) -> Response:
        document = _own_document(request, document_id)
        return Response(self.get_serializer(document).data)

    @extend_schema(
        summary="Delete one of your documents, its file and every passage read from it",
        description="It is gone from your library and its searches at once; its passages leave both indexes and "
        "the database in the background.",
        responses={
            204: None,
            404: _MISSING,
            503: OpenApiResponse(
                common.DetailSerializer, description="The task queue is unreachable: nothing was deleted; try again."
            ),
        },
    )
    def delete(self, request: Request, document_id: int) -> Response:
        try:
            services.document_delete(document=_own_document(request, document_id))
        except DocumentRefusedError as exc:
            return Response({"detail": str(exc)}, status=exc.http_status)
        return Response(status=status.HTTP_204_NO_CONTENT)
