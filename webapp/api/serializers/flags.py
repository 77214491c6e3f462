"""What the API reads and writes for flags on answer sentences."""

from __future__ import annotations

from rest_framework import serializers

from webapp.api.serializers.common import ID_BOUNDS
from webapp.review.models import Flag


class FlagCreateSerializer(serializers.Serializer):
    question = serializers.IntegerField(**ID_BOUNDS, help_text="The question's id.")
    sentence = serializers.IntegerField(min_value=0, help_text="The answer sentence's position, from 0.")
    reason = serializers.ChoiceField(choices=Flag.Reason.choices)
    pmid = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=32, help_text="The cited PMID it is about, if one."
    )
    comment = serializers.CharField(required=False, allow_blank=True, default="", max_length=4000)


class FlagListQuerySerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=Flag.Status.choices, required=False)
    reason = serializers.ChoiceField(choices=Flag.Reason.choices, required=False)
    question = serializers.IntegerField(required=False, **ID_BOUNDS, help_text="Only flags on this question.")


class FlagSerializer(serializers.ModelSerializer):
    question = serializers.IntegerField(source="question_id", read_only=True)
    sentence = serializers.IntegerField(
        source="sentence.position", read_only=True, help_text="The answer sentence's position."
    )
    sentence_text = serializers.CharField(source="sentence.display_text", read_only=True)
    flagged_by = serializers.CharField(source="flagged_by.username", default=None, read_only=True, allow_null=True)
    resolved_by = serializers.CharField(source="resolved_by.username", default=None, read_only=True, allow_null=True)
    # Declared rather than generated: DRF drops `allow_blank` from a generated read-only field, and the schema then
    # left out the "" every flag has until a reviewer labels it.
    reviewer_label = serializers.ChoiceField(
        choices=Flag.Label.choices,
        allow_blank=True,
        read_only=True,
        help_text="The label the reviewer says is right; empty until labelled.",
    )
    verifier_confirmed = serializers.BooleanField(
        allow_null=True,
        read_only=True,
        help_text="Whether the reviewer's label matches the verifier's; null until labelled.",
    )

    class Meta:
        model = Flag
        fields = (
            "id", "question", "sentence", "sentence_text", "pmid", "reason", "comment", "verifier_verdict",
            "flagged_by", "created_at", "status", "reviewer_label", "resolution_note", "resolved_by", "resolved_at",
            "verifier_confirmed",
        )  # fmt: skip
        read_only_fields = fields
        extra_kwargs = {
            "verifier_verdict": {
                "help_text": "The sentence's overall verdict when the flag was raised, UNCLEAR included. A reviewer "
                "labels SUPPORT, CONTRADICT or NO_EVIDENCE, so an UNCLEAR verdict is never confirmed."
            }
        }
