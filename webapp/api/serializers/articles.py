"""An article as the API shows it on its own, with its abstract split as the verifier split it: the typed payload of
webapp/qa/payloads.py (a question's sources are its SourcePayload part)."""

from __future__ import annotations

from webapp.api.serializers.typed import payload_serializer_class
from webapp.qa.payloads import ArticlePayload

ArticleSerializer = payload_serializer_class(ArticlePayload)
