"""The JSON API: parse with a serializer, check the caller's role and access, call a service or selector, respond.

Every endpoint needs a signed-in caller (token or session) with the researcher role; what a caller may see
beyond that is `webapp.qa.access`'s rule. A question or flag the caller may not see is reported as missing (404),
so ids reveal nothing.
"""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import serializers as drf_serializers
from rest_framework import status
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from webapp.accounts import sign_in_limit
from webapp.accounts.api_tokens import api_token_revoke, api_token_rotate
from webapp.accounts.roles import AnyUser
from webapp.api.permissions import RESEARCHER_ONLY
from webapp.api.serializers import articles, common, flags, question_detail, questions
from webapp.corpus.models import Article
from webapp.qa import selectors
from webapp.qa.access import (
    question_cancellable,
    question_followable,
    question_or_404,
    question_viewable,
    questions_visible,
)
from webapp.qa.models import Question
from webapp.qa.services import admission, ending
from webapp.review.models import Flag
from webapp.review.selectors import flags_visible
from webapp.review.services import FlagRejectedError, flag_create
from webapp.watch.selectors import question_watch_payload


def _query(serializer_class: type[drf_serializers.Serializer], request: Request) -> dict[str, Any]:
    query = serializer_class(data=request.query_params)
    query.is_valid(raise_exception=True)
    return dict(query.validated_data)


@extend_schema_view(
    post=extend_schema(
        summary="Exchange a username and password for an API token",
        description="Send the token on every other call as the header `Authorization: Token <token>`. "
        "The same token is returned until it is rotated (`POST /api/v1/auth/token/rotate`, or the site's API token "
        "page) or revoked (`POST /api/v1/auth/token/revoke`, the site's page, or a change of password); "
        "`manage.py api_token USERNAME` prints it too.",
        request=AuthTokenSerializer,
        responses={
            200: common.TokenSerializer,
            400: common.INVALID,
            429: OpenApiResponse(
                common.DetailSerializer,
                description="`VERIMED_LOGIN_FAILURE_LIMIT` failed sign-ins in a row for this username from this "
                "address (the site's sign-in page counts too); `Retry-After` says how many seconds to wait. "
                "Any try before then starts the wait again.",
            ),
        },
    )
)
class TokenView(ObtainAuthToken):
    """DRF's token exchange. It reads no credentials but the posted ones, so a browser's session cookie plays
    no part (and no CSRF token is asked for). Wrong passwords count towards the sign-in limit."""

    authentication_classes = ()

    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        credentials = self.get_serializer(data=request.data)
        if not credentials.is_valid():
            # A locked-out username and address get the same "wrong credentials" from `authenticate` (the right
            # password too: it is never checked); axes marks the request it was handed.
            if sign_in_limit.sign_in_locked_out(request):
                retry_after = {"Retry-After": str(sign_in_limit.cooloff_seconds())}
                detail = {"detail": sign_in_limit.locked_out_message()}
                return Response(detail, status=status.HTTP_429_TOO_MANY_REQUESTS, headers=retry_after)
            raise ValidationError(credentials.errors)
        user = credentials.validated_data["user"]
        sign_in_limit.sign_in_succeeded(request, user)
        token, _ = Token.objects.get_or_create(user=user)
        return Response({"token": token.key})


class TokenRotateView(APIView):
    """A new token for the caller (by token or session); the one sent stops working at once."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Replace your API token with a new one",
        request=None,
        responses={200: common.TokenSerializer, 401: common.DetailSerializer},
    )
    def post(self, request: Request) -> Response:
        return Response({"token": api_token_rotate(user=request.user).key})


class TokenRevokeView(APIView):
    """Delete the caller's token: calls that send it are refused from then on."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Revoke your API token",
        request=None,
        responses={204: None, 401: common.DetailSerializer},
    )
    def post(self, request: Request) -> Response:
        api_token_revoke(user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


def _followable_parent(user: AnyUser, question_id: int | None) -> Question | None:
    """The question a follow-up is asked after: the caller's own, answered; None when no parent was named."""
    if question_id is None:
        return None
    parent = Question.objects.filter(pk=question_id).first()
    if parent is None or not question_followable(user=user, question=parent):
        raise ValidationError({"parent": ["No such question of yours with an answer (status done) to follow up."]})
    return parent


class QuestionListView(GenericAPIView):
    permission_classes = RESEARCHER_ONLY
    serializer_class = questions.QuestionSummarySerializer

    @extend_schema(
        summary="Your questions (or everyone's, for reviewers), newest first",
        parameters=[questions.QuestionListQuerySerializer],
        responses=questions.QuestionSummarySerializer(many=True),
    )
    def get(self, request: Request) -> Response:
        query = _query(questions.QuestionListQuerySerializer, request)
        found = selectors.questions_history(
            visible=questions_visible(user=request.user),
            user_id=None if query["all"] else request.user.pk,
            search=query.get("search", ""),
            status=query.get("status", ""),
        )
        page = self.paginate_queryset(found)
        return self.get_paginated_response(self.get_serializer(page, many=True).data)

    @extend_schema(
        summary="Ask a question",
        description="The question is queued for retrieval, generation and verification; poll `url` for the result. "
        "With `parent`, it is asked as a follow-up in that question's thread.",
        request=questions.QuestionCreateSerializer,
        responses={
            201: questions.QuestionCreatedSerializer,
            400: common.INVALID,
            503: OpenApiResponse(
                common.DetailSerializer,
                description="Too many questions and deep checks are queued or running; try again in a few minutes.",
            ),
            429: OpenApiResponse(
                common.DetailSerializer,
                description="You asked `VERIMED_QUESTIONS_PER_HOUR` questions, or started "
                "`VERIMED_MODEL_ACTIONS_PER_HOUR` questions, follow-up rewrites, deep checks and re-checks, in the "
                "last hour; `Retry-After` says how many seconds until you may ask again.",
            ),
        },
    )
    def post(self, request: Request) -> Response:
        given = questions.QuestionCreateSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        parent = _followable_parent(request.user, given.validated_data.get("parent"))
        try:
            question = admission.question_create(
                text=given.validated_data["question"],
                user=request.user,
                retrieval=given.validated_data["retrieval"],
                filters=given.validated_data["filters"],
                parent=parent,
            )
        except admission.QuestionRateLimitedError as exc:
            retry_after = {"Retry-After": str(exc.retry_after_seconds)}
            return Response({"detail": str(exc)}, status=exc.http_status, headers=retry_after)
        except admission.QueueFullError as exc:
            return Response({"detail": str(exc)}, status=exc.http_status, headers={"Retry-After": "60"})
        except admission.QuestionRejectedError as exc:
            raise ValidationError({"question": [str(exc)]}) from exc
        return _created(request, question)


def _created(request: Request, question: Question) -> Response:
    """201 with a newly queued question: its id, status, and where to poll it and read it on the site."""
    created = {
        "id": question.pk,
        "status": question.status,
        "url": request.build_absolute_uri(reverse("api-question", args=[question.pk])),
        "page_url": request.build_absolute_uri(reverse("question", args=[question.pk])),
    }
    return Response(questions.QuestionCreatedSerializer(created).data, status=status.HTTP_201_CREATED)


class QuestionDetailView(APIView):
    permission_classes = RESEARCHER_ONLY

    @extend_schema(
        summary="A question's status and result",
        description="The answer grows while the model writes; sentences and verdicts appear once `status` is done.",
        responses={200: question_detail.QuestionDetailSerializer, 404: common.MISSING_QUESTION},
    )
    def get(self, request: Request, question_id: int) -> Response:
        question = question_or_404(user=request.user, question_id=question_id)
        watch = question_watch_payload(question=question, user=request.user)
        payload = {**selectors.question_payload(question, viewer_id=request.user.pk), **watch}
        # Through the serializer the schema is made from: a client gets the keys the schema lists, no others (the
        # page's JSON carries more, for its own script).
        return Response(question_detail.QuestionDetailSerializer(payload).data)


class QuestionCancelView(APIView):
    permission_classes = RESEARCHER_ONLY

    @extend_schema(
        summary="Stop a question",
        description="For the person who asked, or an admin. A finished question is left as it is "
        "(`cancel_requested` stays false).",
        request=None,
        responses={
            200: questions.CancelledSerializer,
            403: OpenApiResponse(common.DetailSerializer, description="You may see this question but not cancel it."),
            404: common.MISSING_QUESTION,
        },
    )
    def post(self, request: Request, question_id: int) -> Response:
        question = question_or_404(user=request.user, question_id=question_id)
        if not question_cancellable(user=request.user, question=question):
            raise PermissionDenied("Only the person who asked, or an admin, may cancel a question.")
        question = ending.question_cancel(question_id=question.pk)
        result = {"id": question.pk, "status": question.status, "cancel_requested": question.cancel_requested}
        return Response(questions.CancelledSerializer(result).data)


class QuestionAskAgainView(APIView):
    permission_classes = RESEARCHER_ONLY

    @extend_schema(
        summary="Ask a failed, stopped or lost question again",
        description="For the person who asked, or an admin: a new question with the same text, search settings and "
        "thread, under the same hourly limits and queue valve as asking. A lost original (queued or in a stage, "
        "unmoved for `VERIMED_QUESTION_LOST_MINUTES`) is marked failed for good first.",
        request=None,
        responses={
            201: questions.QuestionCreatedSerializer,
            400: OpenApiResponse(common.DetailSerializer, description="The question has not failed or been stopped."),
            403: OpenApiResponse(common.DetailSerializer, description="You may see this question but not ask it."),
            404: common.MISSING_QUESTION,
            429: OpenApiResponse(common.DetailSerializer, description="Your hourly limit; see `Retry-After`."),
            503: OpenApiResponse(common.DetailSerializer, description="The queue is full; try again in a minute."),
        },
    )
    def post(self, request: Request, question_id: int) -> Response:
        question = question_or_404(user=request.user, question_id=question_id)
        if not question_cancellable(user=request.user, question=question):
            raise PermissionDenied("Only the person who asked, or an admin, may ask a question again.")
        try:
            again = admission.question_ask_again(question=question, user=request.user)
        except admission.QuestionRejectedError as exc:
            headers = {"Retry-After": str(exc.retry_after_seconds)} if exc.retry_after_seconds else {}
            return Response({"detail": str(exc)}, status=exc.http_status, headers=headers)
        return _created(request, again)


class ArticleDetailView(APIView):
    permission_classes = RESEARCHER_ONLY

    @extend_schema(
        summary="An article with its abstract split into sentences",
        responses={200: articles.ArticleSerializer, 404: OpenApiResponse(common.DetailSerializer)},
    )
    def get(self, request: Request, pmid: str) -> Response:
        try:
            return Response(selectors.article_payload(pmid=pmid))
        except Article.DoesNotExist:
            raise NotFound("No such article.") from None


class FlagListView(GenericAPIView):
    permission_classes = RESEARCHER_ONLY
    serializer_class = flags.FlagSerializer

    @extend_schema(
        summary="Flags: your own, or all of them for reviewers and admins; newest first",
        parameters=[flags.FlagListQuerySerializer],
        responses=flags.FlagSerializer(many=True),
    )
    def get(self, request: Request) -> Response:
        query = _query(flags.FlagListQuerySerializer, request)
        found = flags_visible(user=request.user)
        if "status" in query:
            found = found.filter(status=query["status"])
        if "reason" in query:
            found = found.filter(reason=query["reason"])
        if "question" in query:
            found = found.filter(question_id=query["question"])
        page = self.paginate_queryset(found)
        return self.get_paginated_response(self.get_serializer(page, many=True).data)

    @extend_schema(
        summary="Flag an answer sentence",
        request=flags.FlagCreateSerializer,
        responses={201: flags.FlagSerializer, 400: common.INVALID},
    )
    def post(self, request: Request) -> Response:
        given = flags.FlagCreateSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        question = Question.objects.filter(pk=data["question"]).first()
        if question is None or not question_viewable(user=request.user, question=question):
            raise ValidationError({"question": ["No such question."]})
        try:
            flag = flag_create(
                question=question,
                sentence_position=data["sentence"],
                reason=data["reason"],
                comment=data["comment"],
                pmid=data["pmid"],
                user=request.user,
            )
        except FlagRejectedError as exc:
            raise common.non_field_error(str(exc)) from exc
        return Response(self.get_serializer(flag).data, status=status.HTTP_201_CREATED)


class FlagDetailView(APIView):
    permission_classes = RESEARCHER_ONLY

    @extend_schema(
        summary="One flag",
        responses={200: flags.FlagSerializer, 404: OpenApiResponse(common.DetailSerializer)},
    )
    def get(self, request: Request, flag_id: int) -> Response:
        try:
            flag = flags_visible(user=request.user).get(pk=flag_id)
        except Flag.DoesNotExist:
            raise NotFound("No such flag.") from None
        return Response(flags.FlagSerializer(flag).data)
