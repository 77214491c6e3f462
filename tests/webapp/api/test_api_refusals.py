"""What the schema fuzzer (test_schema_fuzz.py) found, each pinned by a plain test: refusals Django made around the
API's views came as HTML pages, ids beyond 64 bits reached the database as a 500, and the schema left out answers
the API gives."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.webapp.factories import answer_with_three_verdicts, notification_stored, recheck_stored
from webapp.accounts.roles import RESEARCHER
from webapp.review.services import flag_create
from webapp.watch.models import Notification

pytestmark = pytest.mark.django_db

BEYOND_64_BITS = 2**63


@pytest.fixture
def researcher(role_users: dict[str, User]) -> APIClient:
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=role_users[RESEARCHER])
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.mark.parametrize(
    "path", ["/api/v1/questions/null,null", "/api/v1/questions/-1/watch", "/api/v1/articles/", "/api/v1/nothing"]
)
def test_an_api_url_no_route_matches_is_a_json_404_that_says_so(researcher: APIClient, path: str) -> None:
    response = researcher.post(path) if path.endswith("watch") else researcher.get(path)
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert "No such API endpoint" in response.json()["detail"]


def test_a_page_no_route_matches_is_still_the_sites_own_404_page(client: Client) -> None:
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")
    assert "Not found" in response.content.decode()


def test_a_form_with_more_fields_than_django_reads_is_a_json_400_that_says_so(researcher: APIClient) -> None:
    too_many = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS + 1
    response = researcher.post("/api/v1/notifications/read", {"ids": list(range(1, too_many + 1))}, format="multipart")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"detail": f"The request has more than {too_many - 1:,} fields, the most read."}


def test_a_body_larger_than_django_reads_is_a_json_400_that_says_so(researcher: APIClient) -> None:
    body = "question=" + "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)
    response = researcher.post("/api/v1/questions", body, content_type="application/x-www-form-urlencoded")
    assert response.status_code == 400
    assert "larger than" in response.json()["detail"]


def test_marking_a_notification_id_beyond_64_bits_read_is_refused_not_a_500(
    researcher: APIClient, role_users: dict[str, User]
) -> None:
    question = answer_with_three_verdicts(user=role_users[RESEARCHER])
    notification = notification_stored(user=role_users[RESEARCHER], recheck=recheck_stored(question=question))
    response = researcher.post("/api/v1/notifications/read", {"ids": [BEYOND_64_BITS]}, format="json")
    assert response.status_code == 400
    assert list(response.json()) == ["ids"]
    largest = researcher.post("/api/v1/notifications/read", {"ids": [BEYOND_64_BITS - 1]}, format="json")
    assert largest.json() == {"marked": 0, "unread": 1}  # the largest id there can be: accepted, matches nothing
    Notification.objects.get(pk=notification.pk, read_at__isnull=True)


def test_listing_the_flags_of_a_question_id_beyond_64_bits_is_refused_not_a_500(researcher: APIClient) -> None:
    response = researcher.get("/api/v1/flags", {"question": BEYOND_64_BITS})
    assert response.status_code == 400
    assert list(response.json()) == ["question"]
    assert researcher.get("/api/v1/flags", {"question": BEYOND_64_BITS - 1}).json()["count"] == 0


def _schema(client: Client) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(client.get("/api/schema/").content)
    return loaded


def _enum_values(schema: dict[str, Any], field: dict[str, Any]) -> set[str]:
    """The values an enum property allows, through the `$ref`s and `oneOf`/`allOf` drf-spectacular writes."""
    if "$ref" in field:
        return _enum_values(schema, schema["components"]["schemas"][field["$ref"].rsplit("/", 1)[1]])
    values = set(field.get("enum", ()))
    for part in (*field.get("oneOf", ()), *field.get("allOf", ())):
        values |= _enum_values(schema, part)
    return values


def test_an_unlabelled_flags_empty_reviewer_label_is_documented(researcher: APIClient, client: Client) -> None:
    question = answer_with_three_verdicts(user=User.objects.get(username=f"{RESEARCHER}-user"))
    flag_create(question=question, sentence_position=0, reason="unsupported", user=question.user)
    assert researcher.get("/api/v1/flags").json()["results"][0]["reviewer_label"] == ""
    schema = _schema(client)
    label = schema["components"]["schemas"]["Flag"]["properties"]["reviewer_label"]
    assert _enum_values(schema, label) == {"", "SUPPORT", "CONTRADICT", "NO_EVIDENCE"}


def test_every_operation_documents_the_refusals_drf_gives_every_view(client: Client) -> None:
    schema = _schema(client)
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            responses = operation["responses"]
            where = f"{method.upper()} {path}"
            if "security" in operation:
                for status in ("401", "403"):
                    body = responses[status]["content"]["application/json"]["schema"]
                    assert body == {"$ref": "#/components/schemas/Detail"}, where
            if "requestBody" in operation:
                assert {"400", "415"} <= set(responses), where
            if any(parameter["in"] == "query" for parameter in operation.get("parameters", ())):
                assert "400" in responses, where


def test_the_links_lead_from_an_asked_question_to_what_is_done_with_it(client: Client) -> None:
    asked = _schema(client)["paths"]["/api/v1/questions"]["post"]["responses"]["201"]["links"]
    assert asked["GetQuestion"] == {
        "operationId": "questions_retrieve",
        "description": "Its status and result.",
        "parameters": {"question_id": "$response.body#/id"},
    }
    assert {link["operationId"] for link in asked.values()} >= {
        "questions_cancel_create",
        "questions_watch_create",
        "questions_deep_check_create",
    }


@pytest.mark.parametrize("path", ["/api/v1/questions", "/api/v1/flags", "/api/v1/notifications"])
def test_a_page_size_beyond_64_bits_is_capped_not_a_500(
    researcher: APIClient, role_users: dict[str, User], path: str
) -> None:
    # One of each: DRF asks the database for a page only when there is something to page.
    question = answer_with_three_verdicts(user=role_users[RESEARCHER])
    flag_create(question=question, sentence_position=0, reason="unsupported", user=question.user)
    notification_stored(user=role_users[RESEARCHER], recheck=recheck_stored(question=question))
    response = researcher.get(path, {"limit": BEYOND_64_BITS})
    assert response.status_code == 200
    assert len(response.json()["results"]) == response.json()["count"] == 1
