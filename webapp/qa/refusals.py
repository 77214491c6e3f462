"""How a form that posts without JavaScript answers model work the admission rule refused (the hourly limits, the
queue valve: webapp/qa/services/admission.py): the refusal's status, `Retry-After` where waiting helps, and the
message on a page of its own with the way back to the answer. The ask page and the follow-up section show the message
in place instead; the API answers with the same status and header."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from webapp.qa.models import Question
from webapp.qa.services.admission import QuestionRejectedError


def refusal_headers(refusal: QuestionRejectedError) -> dict[str, str]:
    seconds = refusal.retry_after_seconds
    return {} if seconds is None else {"Retry-After": str(seconds)}


def refused_page(
    request: HttpRequest, refusal: QuestionRejectedError, *, question: Question, heading: str
) -> HttpResponse:
    """`heading` names what was refused ("The re-check was not started")."""
    context = {"heading": heading, "message": str(refusal), "question": question}
    response = render(request, "qa/refused.html", context, status=refusal.http_status)
    for name, value in refusal_headers(refusal).items():
        response[name] = value
    return response
