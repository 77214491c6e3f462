"""The API of watched answers: watch or unwatch a question, read and mark notifications. Parse, check who asks,
call a service or selector, respond (as webapp/api/views.py)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers as drf_serializers
from rest_framework import status
from rest_framework.exceptions import PermissionDenied
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from webapp.api.permissions import RESEARCHER_ONLY
from webapp.api.serializers import common, watch
from webapp.qa.access import question_or_404
from webapp.qa.models import Question
from webapp.watch import selectors, services
from webapp.watch.access import question_watchable

_NOT_OWNER = OpenApiResponse(
    common.DetailSerializer, description="You may see this question but not watch it: only the person who asked."
)
_NOT_ANSWERED = OpenApiResponse(
    common.DetailSerializer, description="The question is not answered (done) yet: there is nothing to re-check."
)


def _owned_question(request: Request, question_id: int) -> Question:
    question = question_or_404(user=request.user, question_id=question_id)
    if not question_watchable(user=request.user, question=question):
        raise PermissionDenied("Only the person who asked may watch a question.")
    return question


def _state(question: Question, request: Request) -> Response:
    watched = selectors.question_watched(question=question, user=request.user)
    return Response(watch.WatchStateSerializer({"question": question.pk, "watched": watched}).data)


class QuestionWatchView(APIView):
    permission_classes = RESEARCHER_ONLY

    @extend_schema(
        summary="Watch your answered question",
        description="It is re-checked after each PubMed update and index rebuild, without being rewritten: its "
        "`rechecks` list what changed, and a notification tells you when something did. Watching twice is harmless.",
        request=None,
        responses={
            200: watch.WatchStateSerializer,
            400: _NOT_ANSWERED,
            403: _NOT_OWNER,
            404: common.MISSING_QUESTION,
        },
    )
    def post(self, request: Request, question_id: int) -> Response:
        question = _owned_question(request, question_id)
        if question.status != Question.Status.DONE:
            return Response({"detail": "Only an answered question can be watched."}, status=status.HTTP_400_BAD_REQUEST)
        services.watch_create(user=request.user, question=question)
        return _state(question, request)

    @extend_schema(
        summary="Stop watching a question",
        description="Its re-checks so far stay listed on it.",
        request=None,
        responses={200: watch.WatchStateSerializer, 403: _NOT_OWNER, 404: common.MISSING_QUESTION},
    )
    def delete(self, request: Request, question_id: int) -> Response:
        question = _owned_question(request, question_id)
        services.watch_delete(user=request.user, question=question)
        return _state(question, request)


class NotificationQuerySerializer(drf_serializers.Serializer):
    unread = drf_serializers.BooleanField(required=False, help_text="Only unread notifications (true) or read ones.")


class NotificationListView(GenericAPIView):
    permission_classes = RESEARCHER_ONLY
    serializer_class = watch.NotificationSerializer

    @extend_schema(
        summary="Your notifications, newest first",
        description="One per re-check of a question you watch that found something; nothing is e-mailed.",
        parameters=[NotificationQuerySerializer],
        responses=watch.NotificationSerializer(many=True),
    )
    def get(self, request: Request) -> Response:
        # A plain dict: from a QueryDict, DRF reads a missing boolean as false rather than as not given.
        query = NotificationQuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        notifications = selectors.notifications_of(user=request.user)
        if "unread" in query.validated_data:
            notifications = notifications.filter(read_at__isnull=query.validated_data["unread"])
        page = self.paginate_queryset(notifications)
        return self.get_paginated_response([selectors.notification_payload(item) for item in page or []])


class NotificationsReadView(APIView):
    permission_classes = RESEARCHER_ONLY

    @extend_schema(
        summary="Mark notifications read",
        request=watch.NotificationsReadSerializer,
        responses={200: watch.NotificationsMarkedSerializer},
    )
    def post(self, request: Request) -> Response:
        given = watch.NotificationsReadSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        marked = services.notifications_mark_read(user=request.user, notification_ids=given.validated_data.get("ids"))
        unread = selectors.notifications_unread_count(user_id=request.user.pk)
        return Response(watch.NotificationsMarkedSerializer({"marked": marked, "unread": unread}).data)
