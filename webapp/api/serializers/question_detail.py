"""A question's status and result, as the API returns it: the typed payload `webapp.qa.selectors.question_payload`
builds (webapp/qa/payloads.py; the page reads the very same JSON), with what watch adds (`watched`, `rechecks`)."""

from __future__ import annotations

from rest_framework import serializers

from webapp.api.serializers.typed import payload_serializer_class
from webapp.api.serializers.watch import RecheckSerializer
from webapp.qa.payloads import QuestionPayload
from webapp.watch.selectors import RECHECKS_LISTED

QuestionDetailSerializer = payload_serializer_class(
    QuestionPayload,
    name="QuestionDetailSerializer",
    extra={
        "watched": serializers.BooleanField(
            help_text="Whether you watch this answer: it is re-checked after each PubMed update and index rebuild "
            "(`POST` or `DELETE` on `/api/v1/questions/{id}/watch`); only the person who asked may watch it."
        ),
        "rechecks": RecheckSerializer(
            many=True,
            help_text=f"Its re-checks, newest first (the newest {RECHECKS_LISTED}): the answer is never rewritten, "
            "what changed since the previous check is listed here.",
        ),
    },
)
