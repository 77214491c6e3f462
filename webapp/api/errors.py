"""The site's 400 and 404 handlers (`handler400`, `handler404` in webapp/urls.py): JSON with a `detail` under `/api/`.

DRF answers JSON for whatever goes wrong inside its views. Two refusals come from Django itself, around them, and were
HTML pages that an API client cannot read (the schema fuzzer found both): a URL no route matches (an id that is not a
number, a path with a typo) and a request body Django will not read (more than DATA_UPLOAD_MAX_NUMBER_FIELDS form
fields, a body over DATA_UPLOAD_MAX_MEMORY_SIZE). Everywhere else the site's own pages answer, as before.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults

API_PREFIX = "/api/"


def _for_api(request: HttpRequest) -> bool:
    return request.path.startswith(API_PREFIX)


def _refusal_reason(exception: Exception) -> str:
    if isinstance(exception, TooManyFieldsSent):
        return f"The request has more than {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS:,} fields, the most read."
    if isinstance(exception, TooManyFilesSent):
        return f"The request has more than {settings.DATA_UPLOAD_MAX_NUMBER_FILES:,} files, the most read."
    if isinstance(exception, RequestDataTooBig):
        return f"The request body is larger than the {settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,} bytes allowed."
    return "The request could not be read."


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _for_api(request):
        return JsonResponse({"detail": _refusal_reason(exception)}, status=400)
    return defaults.bad_request(request, exception)


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _for_api(request):
        detail = "No such API endpoint: check the path and its ids against the documentation at /api/docs/."
        return JsonResponse({"detail": detail}, status=404)
    return defaults.page_not_found(request, exception)
