"""The deep check's API: start it (or run it again), read its result, stop it. Parse, check who asks, call a service
or selector, respond (as webapp/api/views.py)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from webapp.api.permissions import RESEARCHER_ONLY
from webapp.api.serializers import common
from webapp.api.serializers.deep_check import DeepCheckSerializer
from webapp.deepcheck import selectors, services
from webapp.deepcheck.models import DeepCheck
from webapp.qa.access import question_or_404
from webapp.qa.models import Question

_NOT_ANSWERED = OpenApiResponse(
    common.DetailSerializer, description="The question is not answered (done) yet: there is nothing to check."
)
_NO_CHECK = OpenApiResponse(
    common.DetailSerializer, description="No such question, not one you may see, or never deep-checked."
)


def _result(question: Question, check: DeepCheck, *, code: int = status.HTTP_200_OK) -> Response:
    payload = selectors.deep_check_payload(question=question, deep_check=check)
    return Response(DeepCheckSerializer(payload).data, status=code)


def _existing(question: Question) -> DeepCheck:
    check = selectors.deep_check_of(question=question)
    if check is None:
        raise NotFound("This question has not been deep-checked.")
    return check


class DeepCheckView(APIView):
    permission_classes = RESEARCHER_ONLY

    @extend_schema(
        summary="Deep-check an answered question",
        description="Each cited sentence is split into self-contained claims (one model call); every claim is judged "
        "against the abstracts its sentence cites, and one they do not settle is searched for in the index. Poll "
        "the GET of this URL for progress and the tree. A check already queued or running is returned as it is; a "
        "finished one starts again. For the question's owner, reviewers and admins.",
        request=None,
        responses={202: DeepCheckSerializer, 404: common.MISSING_QUESTION, 409: _NOT_ANSWERED},
    )
    def post(self, request: Request, question_id: int) -> Response:
        question = question_or_404(user=request.user, question_id=question_id)
        try:
            check = services.deep_check_start(question=question, user=request.user)
        except services.DeepCheckRejectedError as exc:
            return Response({"detail": str(exc)}, status=exc.http_status)
        return _result(question, check, code=status.HTTP_202_ACCEPTED)

    @extend_schema(
        summary="A question's deep check: its progress, then its tree",
        responses={200: DeepCheckSerializer, 404: _NO_CHECK},
    )
    def get(self, request: Request, question_id: int) -> Response:
        question = question_or_404(user=request.user, question_id=question_id)
        return _result(question, _existing(question))


class DeepCheckStopView(APIView):
    permission_classes = RESEARCHER_ONLY

    @extend_schema(
        summary="Stop a question's deep check",
        description="A queued check stops at once, a running one between two of its steps; a finished one is left "
        "as it is.",
        request=None,
        responses={200: DeepCheckSerializer, 404: _NO_CHECK},
    )
    def post(self, request: Request, question_id: int) -> Response:
        question = question_or_404(user=request.user, question_id=question_id)
        check = services.deep_check_stop(deep_check_id=_existing(question).pk)
        return _result(question, check)
