"""The deep check's API: start it (or run it again), read its result, stop it. Parse, check who asks, call a service
or selector, respond (as webapp/api/views.py)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from webapp.api.permissions import RESEARCHER_ONLY
from webapp.api.serializers import common
from webapp.api.serializers.deep_check import DeepCheckSerializer
from webapp.deepcheck import selectors, services
from webapp.deepcheck.access import deep_check_runnable
from webapp.deepcheck.models import DeepCheck
from webapp.qa.access import question_or_404
from webapp.qa.models import Question
from webapp.qa.refusals import refusal_headers
from webapp.qa.services.admission import QuestionRejectedError

_NOT_ANSWERED = OpenApiResponse(
    common.DetailSerializer, description="The question is not answered (done) yet: there is nothing to check."
)
_NO_CHECK = OpenApiResponse(
    common.DetailSerializer, description="No such question, not one you may see, or never deep-checked."
)
_NOT_YOURS = OpenApiResponse(
    common.DetailSerializer, description="You may read this question's deep check but not start or stop it."
)
_BUSY = OpenApiResponse(
    common.DetailSerializer,
    description="Too many questions and deep checks are queued or running; `Retry-After` says when to try again.",
)
_RATE_LIMITED = OpenApiResponse(
    common.DetailSerializer,
    description="You started `VERIMED_MODEL_ACTIONS_PER_HOUR` questions, follow-up rewrites, deep checks and "
    "re-checks in the last hour; `Retry-After` says how many seconds until you may start another.",
)


class DeepCheckStartSerializer(serializers.Serializer):
    rerun = serializers.BooleanField(
        default=False, help_text="Start a finished (done, failed, stopped or lost) check again from nothing."
    )


def _runnable(request: Request, question: Question) -> None:
    if not deep_check_runnable(user=request.user, question=question):
        raise PermissionDenied("Only the person who asked, or an admin, may start or stop a deep check.")


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
        "the GET of this URL for progress and the tree (`queue_position` while it waits). A check already queued "
        "or running is returned as it is; so is a finished one, unless `rerun` starts it again. Each start counts "
        "against your hourly model actions and passes the queue's load valve, as a question does. For the "
        "question's owner and admins; reviewers read it.",
        request=DeepCheckStartSerializer,
        responses={
            202: DeepCheckSerializer,
            403: _NOT_YOURS,
            404: common.MISSING_QUESTION,
            409: _NOT_ANSWERED,
            429: _RATE_LIMITED,
            503: _BUSY,
        },
    )
    def post(self, request: Request, question_id: int) -> Response:
        question = question_or_404(user=request.user, question_id=question_id)
        _runnable(request, question)
        given = DeepCheckStartSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            check = services.deep_check_start(question=question, user=request.user, rerun=given.validated_data["rerun"])
        except services.DeepCheckRejectedError as exc:
            return Response({"detail": str(exc)}, status=exc.http_status)
        except QuestionRejectedError as exc:  # the hourly limit on model actions (429), a full queue (503)
            return Response({"detail": str(exc)}, status=exc.http_status, headers=refusal_headers(exc))
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
        description="A queued (or lost) check stops at once, a running one between two of its steps; a finished one "
        "is left as it is. For the question's owner and admins.",
        request=None,
        responses={200: DeepCheckSerializer, 403: _NOT_YOURS, 404: _NO_CHECK},
    )
    def post(self, request: Request, question_id: int) -> Response:
        question = question_or_404(user=request.user, question_id=question_id)
        _runnable(request, question)
        check = services.deep_check_stop(deep_check_id=_existing(question).pk)
        return _result(question, check)
