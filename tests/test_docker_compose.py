"""docker-compose.yml is checked here, since no Docker engine runs on the development machines."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from tests.support import REPO

SETTINGS_SOURCE = (REPO / "webapp" / "settings.py").read_text()


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    return loaded


def test_every_service_the_settings_need_is_defined(compose: dict[str, Any]) -> None:
    assert {"postgres", "redis", "opensearch", "qdrant", "vllm", "migrate", "web", "worker"} <= set(compose["services"])


def test_the_app_searches_the_opensearch_and_qdrant_services(compose: dict[str, Any]) -> None:
    for name in ("web", "worker"):
        environment = compose["services"][name]["environment"]
        assert (environment["VERIMED_LEXICAL_BACKEND"], environment["VERIMED_VECTOR_BACKEND"]) == (
            "opensearch",
            "qdrant",
        )
        assert environment["VERIMED_OPENSEARCH_URL"] == "http://opensearch:9200"
        assert environment["VERIMED_QDRANT_URL"] == "http://qdrant:6333"


def test_app_services_get_every_setting_from_the_environment(compose: dict[str, Any]) -> None:
    for name in ("web", "worker", "migrate"):
        environment = compose["services"][name]["environment"]
        assert environment["DATABASE_URL"].startswith("postgres://")
        assert environment["DATABASE_URL"].endswith("@postgres:5432/verimed")
        assert environment["CELERY_BROKER_URL"] == "redis://redis:6379/0"
        assert environment["VERIMED_LLM_BASE_URL"] == "http://vllm:8000/v1"
        for variable in environment:
            assert f'"{variable}"' in SETTINGS_SOURCE, f"{variable} is set in compose but never read by settings"


def test_the_served_model_name_is_the_one_the_app_asks_for(compose: dict[str, Any]) -> None:
    model = compose["services"]["web"]["environment"]["VERIMED_LLM_MODEL"]
    assert re.search(rf"--lora-modules {re.escape(model)}=", compose["services"]["vllm"]["command"])


def test_entry_points_exist(compose: dict[str, Any]) -> None:
    assert "webapp.wsgi" in compose["services"]["web"]["command"]
    assert (REPO / "webapp" / "wsgi.py").exists()
    assert compose["services"]["worker"]["command"][:3] == ["celery", "-A", "webapp"]
    assert compose["services"]["web"]["ports"] == ["8000:8000"]
    for name in ("postgres", "redis", "vllm", "web"):
        assert "healthcheck" in compose["services"][name], f"{name} has no healthcheck"


def test_the_app_talks_to_vllm_in_the_fine_tuned_models_own_format(compose: dict[str, Any]) -> None:
    environment = compose["services"]["web"]["environment"]
    command = compose["services"]["vllm"]["command"]

    assert environment["VERIMED_LLM_SERVER_KIND"] == "vllm"
    assert environment["VERIMED_PROMPT_STYLE"] == "verifai"
    window = int(re.search(r"--max-model-len (\d+)", command).group(1))  # type: ignore[union-attr]
    assert int(environment["VERIMED_LLM_CONTEXT_TOKENS"]) == window
    assert int(environment["VERIMED_LLM_MAX_TOKENS"]) == 1225
    assert "--enable-lora" in command
    assert "mistralai/Mistral-7B-Instruct-v0.2" in command
