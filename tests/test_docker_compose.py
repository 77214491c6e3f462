"""docker-compose.yml is checked here, since no Docker engine runs on the development machines."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml
from django.conf import settings

from tests.support import REPO
from webapp.celery import app as celery_app
from webapp.config import config_variables
from webapp.corpus.engines import ALL_ENGINES, engines_for_queues
from webapp.ops.stack import worker_queues

SETTINGS_SOURCE = (REPO / "webapp" / "settings.py").read_text()
# Django's own variables are read in settings.py, VeriMed's in the settings tree.
SETTINGS_READ = set(re.findall(r'env\.\w+\(\s*"([A-Z][A-Z0-9_]+)"', SETTINGS_SOURCE)) | set(config_variables())
WORKERS = {"worker-ingest": "ingest", "worker-embed": "embed", "worker-llm": "llm", "worker-verify": "verify"}
APP_SERVICES = ("migrate", "web", *WORKERS, "beat")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    return loaded


def test_every_service_the_settings_need_is_defined(compose: dict[str, Any]) -> None:
    assert {"postgres", "redis", "opensearch", "qdrant", "vllm", "migrate", "web", "beat", *WORKERS} <= set(
        compose["services"]
    )


def test_the_app_searches_the_opensearch_and_qdrant_services(compose: dict[str, Any]) -> None:
    for name in ("web", *WORKERS):
        environment = compose["services"][name]["environment"]
        assert (environment["VERIMED_LEXICAL_BACKEND"], environment["VERIMED_VECTOR_BACKEND"]) == (
            "opensearch",
            "qdrant",
        )
        assert environment["VERIMED_OPENSEARCH_URL"] == "http://opensearch:9200"
        assert environment["VERIMED_QDRANT_URL"] == "http://qdrant:6333"


def test_app_services_get_every_setting_from_the_environment(compose: dict[str, Any]) -> None:
    for name in APP_SERVICES:
        assert compose["services"][name]["env_file"] == ".env"
        environment = compose["services"][name]["environment"]
        assert environment["VERIMED_PRODUCTION"] == "true"
        assert environment["DATABASE_URL"].startswith("postgres://")
        assert environment["DATABASE_URL"].endswith("@postgres:5432/verimed")
        assert environment["CELERY_BROKER_URL"] == "redis://redis:6379/0"
        assert environment["VERIMED_LLM_BASE_URL"] == "http://vllm:8000/v1"
        for variable in environment:
            assert variable in SETTINGS_READ, f"{variable} is set in compose but never read by settings"


def test_the_served_model_name_is_the_one_the_app_asks_for(compose: dict[str, Any]) -> None:
    model = compose["services"]["web"]["environment"]["VERIMED_LLM_MODEL"]
    assert re.search(rf"--lora-modules {re.escape(model)}=", compose["services"]["vllm"]["command"])


def test_entry_points_exist(compose: dict[str, Any]) -> None:
    assert "webapp.wsgi" in compose["services"]["web"]["command"]
    assert (REPO / "webapp" / "wsgi.py").exists()
    for name in (*WORKERS, "beat"):
        assert compose["services"][name]["command"][:3] == ["celery", "-A", "webapp"]


def test_the_app_port_is_published_on_loopback_only_for_the_tls_proxy(compose: dict[str, Any]) -> None:
    published = [service for service in compose["services"].values() if "ports" in service]

    assert published == [compose["services"]["web"]]
    assert compose["services"]["web"]["ports"] == ["127.0.0.1:8000:8000"]


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


def _queues(command: list[str]) -> set[str]:
    flag = next(i for i, arg in enumerate(command) if arg in ("-Q", "--queues"))
    return set(command[flag + 1].split(","))


def test_each_worker_consumes_its_own_queue_under_its_own_node_name(compose: dict[str, Any]) -> None:
    for name, queue in WORKERS.items():
        command = compose["services"][name]["command"]
        assert command[3] == "worker"
        assert queue in _queues(command), f"{name} does not consume {queue}"
        # Distinct node names per queue (and per container, %h) keep the healthcheck's ping aimed at this worker.
        assert command[command.index("-n") + 1] == f"{queue}@%h"
        assert f"-d {queue}@$$HOSTNAME" in compose["services"][name]["healthcheck"]["test"][1]
        assert any(arg.startswith("--concurrency=") for arg in command), f"{name} sets no concurrency of its own"


def test_together_the_workers_consume_every_routed_queue(compose: dict[str, Any]) -> None:
    consumed = set().union(*(_queues(compose["services"][name]["command"]) for name in WORKERS))
    routed = {route["queue"] for route in settings.CELERY_TASK_ROUTES.values()}

    assert routed == {"ingest", "embed", "llm", "verify"}
    assert routed | {settings.CELERY_TASK_DEFAULT_QUEUE} <= consumed


def test_every_task_the_code_registers_goes_to_a_queue_a_worker_consumes(compose: dict[str, Any]) -> None:
    celery_app.loader.import_default_modules()  # what a worker does at start: every app's tasks module
    ours = sorted(name for name in celery_app.tasks if not name.startswith("celery."))
    consumed = set().union(*(_queues(compose["services"][name]["command"]) for name in WORKERS))

    assert len(ours) >= 9, ours
    for name in ours:
        assert name in settings.CELERY_TASK_ROUTES, f"{name} is not routed: it would sit on the default queue"
        queue = celery_app.amqp.router.route({}, name)["queue"].name
        assert queue in consumed, f"{name} goes to {queue}, which no worker consumes"
    assert not set(settings.CELERY_TASK_ROUTES) - set(ours), "a route names a task that no longer exists"


def test_workers_can_be_scaled_since_none_pins_a_name_or_a_host_port(compose: dict[str, Any]) -> None:
    for name in WORKERS:
        service = compose["services"][name]
        assert "container_name" not in service, f"--scale {name}=N would clash"
        assert "ports" not in service, f"--scale {name}=N would clash"


def test_beat_runs_alone_and_sends_a_registered_task(compose: dict[str, Any]) -> None:
    beat = compose["services"]["beat"]
    celery_app.loader.import_default_modules()

    assert beat["command"][3] == "beat"
    assert "/var/lib/verimed/" in beat["command"][beat["command"].index("--schedule") + 1]  # kept on the volume
    assert settings.CELERY_BEAT_SCHEDULE
    for entry in settings.CELERY_BEAT_SCHEDULE.values():
        assert entry["task"] in celery_app.tasks
        assert entry["task"] in settings.CELERY_TASK_ROUTES
    assert not any(
        name != "beat" and "beat" in service.get("command", []) for name, service in compose["services"].items()
    )


def test_every_long_running_service_has_a_healthcheck_and_resource_hints(compose: dict[str, Any]) -> None:
    for name, service in compose["services"].items():
        if name == "migrate":  # one-shot: the others wait for it to complete instead
            assert service["healthcheck"] == {"disable": True}
            assert compose["services"]["web"]["depends_on"]["migrate"] == {
                "condition": "service_completed_successfully"
            }
            continue
        assert service["healthcheck"]["test"], f"{name} has no healthcheck"
        assert not service["healthcheck"].get("disable"), f"{name} disables its healthcheck"
        resources = service["deploy"]["resources"]
        assert resources["limits"], f"{name} gives no resource limits"
        assert resources["reservations"], f"{name} gives no resource reservations"


def test_the_web_healthcheck_asks_the_health_endpoint(compose: dict[str, Any]) -> None:
    assert "http://127.0.0.1:8000/healthz" in " ".join(compose["services"]["web"]["healthcheck"]["test"])
    assert r"^healthz$" in settings.SECURE_REDIRECT_EXEMPT  # plain http from inside the container


def test_every_named_volume_is_declared(compose: dict[str, Any]) -> None:
    for name, service in compose["services"].items():
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if not source.startswith(("/", ".")):
                assert source in compose["volumes"], f"{name} mounts undeclared volume {source}"


def _env_example_names() -> set[str]:
    """Every variable .env.example lists, set or shown commented out with its default in force."""
    text = (REPO / ".env.example").read_text()
    return set(re.findall(r"^#? ?([A-Z][A-Z0-9_]+)=", text, flags=re.MULTILINE))


def test_env_example_lists_every_variable_the_app_services_are_given(compose: dict[str, Any]) -> None:
    listed = _env_example_names()
    for name in APP_SERVICES:
        missing = set(compose["services"][name]["environment"]) - listed
        assert not missing, f"{name} sets {sorted(missing)}, which .env.example does not list"
    interpolated = set(re.findall(r"\$\{([A-Z_]+)", (REPO / "docker-compose.yml").read_text()))
    assert interpolated <= listed, f"compose reads {sorted(interpolated - listed)} from .env"


def test_env_example_lists_every_variable_the_settings_read() -> None:
    assert {"DJANGO_SECRET_KEY", "DATABASE_URL", "CELERY_BROKER_URL", "VERIMED_UPDATES_SYNC_HOUR"} <= SETTINGS_READ
    unlisted = SETTINGS_READ - _env_example_names()
    assert not unlisted, f"add {sorted(unlisted)} to .env.example"


def test_each_worker_warms_only_the_engines_its_queues_use(compose: dict[str, Any]) -> None:
    warmed = {name: engines_for_queues(_queues(compose["services"][name]["command"])) for name in WORKERS}
    assert warmed["worker-verify"] == frozenset()  # verdicts read abstracts from the database, not an index
    assert warmed["worker-llm"] == ALL_ENGINES  # retrieval embeds the question and searches both indexes
    assert warmed["worker-embed"] == {"embedder", "vectors"}
    assert "embedder" not in warmed["worker-ingest"]
    # The embedded profile's one worker consumes every queue, so it warms everything.
    every_queue = worker_queues(routes=settings.CELERY_TASK_ROUTES, default_queue=settings.CELERY_TASK_DEFAULT_QUEUE)
    assert engines_for_queues(every_queue) == ALL_ENGINES


def test_the_image_takes_the_pdfjs_release_the_makefile_serves() -> None:
    dockerfile = (REPO / "Dockerfile").read_text()
    makefile = (REPO / "Makefile").read_text()
    image = re.search(r"^ARG PDFJS_VERSION=(\S+)$", dockerfile, re.MULTILINE)
    served = re.search(r"^PDFJS_VERSION := (\S+)$", makefile, re.MULTILINE)
    assert image is not None
    assert served is not None
    assert image.group(1) == served.group(1)
    assert "COPY --from=pdfjs /pdfjs/out static/vendor/pdfjs" in dockerfile
    assert "tesseract-ocr" in dockerfile  # scanned library PDFs are read, not refused, in production too
