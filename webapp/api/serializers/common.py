"""What every part of the API shares: the error body, the token, and the responses the views document alike."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers
from rest_framework.settings import api_settings

# Ids are 64-bit (BigAutoField). A larger number matches nothing, but a foreign key's or an `__in` lookup hands it to
# the database, which cannot compare with it (a 500, found by tests/webapp/api/test_schema_fuzz.py): every id the API
# reads as input is held to the range ids have.
ID_BOUNDS: dict[str, Any] = {"min_value": 1, "max_value": 2**63 - 1}


class DetailSerializer(serializers.Serializer):
    detail = serializers.CharField()


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="Send as `Authorization: Token <token>`.")


MISSING_QUESTION = OpenApiResponse(DetailSerializer, description="No such question, or not one you may see.")
INVALID = OpenApiResponse(description="Field name → list of messages (`non_field_errors` for the whole request).")


def non_field_error(message: str) -> serializers.ValidationError:
    return serializers.ValidationError({api_settings.NON_FIELD_ERRORS_KEY: [message]})
