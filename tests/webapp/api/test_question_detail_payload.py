"""The API's question detail is what docs/openapi.yaml says: a real payload (a question asked, answered and verified
with its consensus, as the pipeline stores it) carries no key the schema does not list, at any depth."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User
from django.test import Client

from tests.webapp.qa.test_consensus import _verified, fake_verifier  # noqa: F401 (a fixture used here)
from webapp.accounts.roles import RESEARCHER

SCHEMA = yaml.safe_load((Path(__file__).resolve().parents[3] / "docs" / "openapi.yaml").read_text())
COMPONENTS: dict[str, Any] = SCHEMA["components"]["schemas"]

pytestmark = pytest.mark.django_db


def _resolved(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with its $ref followed and a nullable allOf or oneOf reduced to the one object it allows."""
    if "$ref" in schema:
        return _resolved(COMPONENTS[schema["$ref"].rsplit("/", 1)[1]])
    for combined in ("allOf", "oneOf", "anyOf"):
        if combined in schema:
            parts = [_resolved(part) for part in schema[combined] if part.get("type") != "null"]
            merged: dict[str, Any] = {}
            for part in parts:
                merged = {
                    **merged,
                    **part,
                    "properties": {**merged.get("properties", {}), **part.get("properties", {})},
                }
            return merged
    return schema


def _unlisted(value: Any, schema: dict[str, Any], path: str = "") -> list[str]:
    """Every key in `value` that `schema` does not list, by its path."""
    schema = _resolved(schema)
    found: list[str] = []
    if isinstance(value, dict):
        if schema.get("properties"):
            for key, item in value.items():
                if key not in schema["properties"]:
                    found.append(f"{path}.{key}")
                else:
                    found += _unlisted(item, schema["properties"][key], f"{path}.{key}")
        elif isinstance(schema.get("additionalProperties"), dict):
            for key, item in value.items():
                found += _unlisted(item, schema["additionalProperties"], f"{path}[{key}]")
    elif isinstance(value, list) and "items" in schema:
        for index, item in enumerate(value):
            found += _unlisted(item, schema["items"], f"{path}[{index}]")
    return found


@pytest.mark.usefixtures("fake_verifier")
def test_a_verified_questions_detail_carries_only_what_the_schema_lists(role_users: dict[str, User]) -> None:
    client = Client()
    client.force_login(role_users[RESEARCHER])
    question = _verified(role_users[RESEARCHER])
    assert question.consensus is not None  # the part that had keys of its own

    payload = client.get(f"/api/v1/questions/{question.pk}").json()

    assert payload["consensus"]["verdicts"]  # the walk below reaches the consensus's verdicts
    assert payload["sentences"]
    assert _unlisted(payload, COMPONENTS["QuestionDetail"]) == []


def test_the_walk_finds_a_key_the_schema_does_not_list() -> None:
    verdict = {"label": "SUPPORT", "confidence": 0.9, "evidence_spans": [], "internal_score": 0.4}

    assert _unlisted({"verdicts": {"1": verdict}}, COMPONENTS["Consensus"]) == [".verdicts[1].internal_score"]
