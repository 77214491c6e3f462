"""What every part of the API shares: the error body, the token, and the responses the views document alike."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers
from rest_framework.settings import api_settings


class DetailSerializer(serializers.Serializer):
    detail = serializers.CharField()


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="Send as `Authorization: Token <token>`.")


MISSING_QUESTION = OpenApiResponse(DetailSerializer, description="No such question, or not one you may see.")
INVALID = OpenApiResponse(description="Field name → list of messages (`non_field_errors` for the whole request).")


def non_field_error(message: str) -> serializers.ValidationError:
    return serializers.ValidationError({api_settings.NON_FIELD_ERRORS_KEY: [message]})
