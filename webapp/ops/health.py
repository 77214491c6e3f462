"""`/healthz`: whether this web process can serve, for container healthchecks and load balancers."""

from __future__ import annotations

import logging

from django.db import DatabaseError, connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

logger = logging.getLogger(__name__)


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """200 when the database answers, 503 when not. Public, so it says nothing beyond that (no versions, no counts).

    Only the database is checked: every page needs it, while a search engine or the LLM being down fails questions
    cleanly without making the site unfit to serve (restarting web would not bring them back).
    """
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError:
        logger.warning("health check: the database is unreachable", exc_info=True)
        return JsonResponse({"status": "unavailable", "database": "unreachable"}, status=503)
    return JsonResponse({"status": "ok", "database": "ok"})
