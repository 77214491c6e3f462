"""The production profile is the embedded one plus environment variables: `check --deploy` passes under
.env.example, the default secret is refused, /healthz reports the database, and the queues reach a worker."""

from __future__ import annotations

import json
import re
import secrets
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks as Capture

from tests.support import REPO, free_port, run_with_django_settings
from webapp.corpus.models import IndexJob
from webapp.corpus.periodic import pubmed_updates_sync_daily_task
from webapp.ops.stack import services, worker_queues

# Prints the settings a process ends up with, and what /healthz and / answer over plain http.
PROBE = """
import json, django
django.setup()
from django.conf import settings
from django.test import Client
names = ["SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE", "SECURE_SSL_REDIRECT", "SECURE_HSTS_SECONDS",
         "SECURE_HSTS_INCLUDE_SUBDOMAINS", "SECURE_HSTS_PRELOAD", "SECURE_PROXY_SSL_HEADER", "CSRF_TRUSTED_ORIGINS",
         "SESSION_COOKIE_HTTPONLY", "SESSION_COOKIE_SAMESITE", "SECURE_CONTENT_TYPE_NOSNIFF",
         "SECURE_REFERRER_POLICY", "X_FRAME_OPTIONS"]
client = Client(HTTP_HOST=settings.ALLOWED_HOSTS[0])
health, home = client.get("/healthz"), client.get("/")
print(json.dumps({
    "settings": {name: getattr(settings, name) for name in names},
    "healthz": [health.status_code, health.json()],
    "home": [home.status_code, home.get("Location", "")],
}))
"""


def _env_example() -> dict[str, str]:
    text = (REPO / ".env.example").read_text()
    return dict(re.findall(r"^([A-Z][A-Z0-9_]+)=(.*)$", text, flags=re.MULTILINE))


@pytest.fixture
def production_env(tmp_path: Path) -> dict[str, str]:
    """.env.example as docker compose would hand it to the app, with a strong secret and a writable var folder."""
    return {
        **_env_example(),
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "VERIMED_VAR_DIR": str(tmp_path / "var"),
        # The real PostgreSQL of this machine (trust auth): /healthz needs a database that answers.
        "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/postgres",
    }


def _probe(env: dict[str, str]) -> dict[str, object]:
    result = run_with_django_settings(env, "-c", PROBE)
    assert result.returncode == 0, result.stderr
    probed: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    return probed


def test_check_deploy_passes_under_the_production_environment(production_env: dict[str, str]) -> None:
    result = run_with_django_settings(production_env, "manage.py", "check", "--deploy", "--fail-level", "WARNING")

    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_check_deploy_fails_under_the_embedded_defaults(tmp_path: Path) -> None:
    embedded = {"VERIMED_VAR_DIR": str(tmp_path)}
    result = run_with_django_settings(embedded, "manage.py", "check", "--deploy", "--fail-level", "WARNING")

    assert result.returncode != 0
    for warning in ("security.W004", "security.W008", "security.W009", "security.W012", "security.W016"):
        assert warning in result.stderr + result.stdout


@pytest.mark.parametrize("secret", [None, "", settings.EMBEDDED_SECRET_KEY])
def test_production_refuses_to_start_with_the_default_secret(
    production_env: dict[str, str], secret: str | None
) -> None:
    env = {key: value for key, value in production_env.items() if key != "DJANGO_SECRET_KEY"}
    if secret is not None:
        env["DJANGO_SECRET_KEY"] = secret

    result = run_with_django_settings(env, "manage.py", "check", "--deploy")

    assert result.returncode != 0
    assert "ImproperlyConfigured: VERIMED_PRODUCTION is on but DJANGO_SECRET_KEY is unset" in result.stderr


@pytest.mark.parametrize(
    ("secret", "reason"),
    [
        (_env_example()["DJANGO_SECRET_KEY"], "is .env.example's placeholder"),
        ("k3y-" * 12 + "k", "has 49 characters, fewer than 50"),
    ],
    ids=["placeholder", "short"],
)
def test_production_refuses_to_start_with_the_placeholder_or_a_short_secret(
    production_env: dict[str, str], secret: str, reason: str
) -> None:
    result = run_with_django_settings({**production_env, "DJANGO_SECRET_KEY": secret}, "manage.py", "check")

    assert result.returncode != 0
    assert f"ImproperlyConfigured: VERIMED_PRODUCTION is on but DJANGO_SECRET_KEY {reason}" in result.stderr
    assert secret not in result.stderr


def test_production_switches_the_secure_defaults_on(production_env: dict[str, str]) -> None:
    # Only the switch: every DJANGO_* override removed, so these are the defaults VERIMED_PRODUCTION picks.
    env = {key: value for key, value in production_env.items() if not key.startswith("DJANGO_") or key in (
        "DJANGO_SECRET_KEY", "DJANGO_ALLOWED_HOSTS")}  # fmt: skip

    probed = _probe(env)

    assert probed["settings"] == {
        "SESSION_COOKIE_SECURE": True,
        "CSRF_COOKIE_SECURE": True,
        "SECURE_SSL_REDIRECT": True,
        "SECURE_HSTS_SECONDS": 31_536_000,
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": True,
        "SECURE_HSTS_PRELOAD": True,
        "SECURE_PROXY_SSL_HEADER": ["HTTP_X_FORWARDED_PROTO", "https"],
        "CSRF_TRUSTED_ORIGINS": [],
        "SESSION_COOKIE_HTTPONLY": True,
        "SESSION_COOKIE_SAMESITE": "Lax",
        "SECURE_CONTENT_TYPE_NOSNIFF": True,
        "SECURE_REFERRER_POLICY": "same-origin",
        "X_FRAME_OPTIONS": "DENY",
    }
    # Plain http is sent to https, except the health endpoint the container's own healthcheck calls.
    assert probed["home"] == [301, "https://verimed.example.org/"]
    assert probed["healthz"] == [200, {"status": "ok", "database": "ok"}]


def test_the_embedded_profile_keeps_plain_http_cookies(tmp_path: Path) -> None:
    probed = _probe({"VERIMED_VAR_DIR": str(tmp_path)})

    values = probed["settings"]
    assert isinstance(values, dict)
    assert not values["SESSION_COOKIE_SECURE"]
    assert not values["SECURE_SSL_REDIRECT"]
    assert values["SECURE_HSTS_SECONDS"] == 0
    assert values["SECURE_PROXY_SSL_HEADER"] is None
    assert values["X_FRAME_OPTIONS"] == "DENY"
    assert probed["home"][0] == 302  # type: ignore[index]  # to the sign-in page, over http


def test_every_production_default_can_be_overridden_by_env(production_env: dict[str, str]) -> None:
    overrides = {
        "DJANGO_SECURE_SSL_REDIRECT": "false",
        "DJANGO_SESSION_COOKIE_SECURE": "false",
        "DJANGO_CSRF_COOKIE_SECURE": "false",
        "DJANGO_SECURE_HSTS_SECONDS": "60",
        "DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS": "false",
        "DJANGO_SECURE_HSTS_PRELOAD": "false",
        "DJANGO_BEHIND_TLS_PROXY": "false",
        "DJANGO_CSRF_TRUSTED_ORIGINS": "https://a.example.org,https://b.example.org",
        "DJANGO_SESSION_COOKIE_HTTPONLY": "false",
        "DJANGO_SESSION_COOKIE_SAMESITE": "Strict",
        "DJANGO_SECURE_CONTENT_TYPE_NOSNIFF": "false",
        "DJANGO_SECURE_REFERRER_POLICY": "no-referrer",
        "DJANGO_X_FRAME_OPTIONS": "SAMEORIGIN",
    }

    probed = _probe({**production_env, **overrides})

    assert probed["settings"] == {
        "SESSION_COOKIE_SECURE": False,
        "CSRF_COOKIE_SECURE": False,
        "SECURE_SSL_REDIRECT": False,
        "SECURE_HSTS_SECONDS": 60,
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": False,
        "SECURE_HSTS_PRELOAD": False,
        "SECURE_PROXY_SSL_HEADER": None,
        "CSRF_TRUSTED_ORIGINS": ["https://a.example.org", "https://b.example.org"],
        "SESSION_COOKIE_HTTPONLY": False,
        "SESSION_COOKIE_SAMESITE": "Strict",
        "SECURE_CONTENT_TYPE_NOSNIFF": False,
        "SECURE_REFERRER_POLICY": "no-referrer",
        "X_FRAME_OPTIONS": "SAMEORIGIN",
    }


@pytest.mark.django_db
def test_healthz_answers_anonymous_callers_with_the_database_state() -> None:
    response = Client().get("/healthz")

    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok"}
    assert "no-cache" in response["Cache-Control"]


@pytest.mark.django_db
def test_healthz_takes_no_writes() -> None:
    assert Client().post("/healthz").status_code == 405


def test_healthz_answers_503_when_the_database_is_unreachable(production_env: dict[str, str]) -> None:
    closed_port = free_port()  # bound and released: nothing listens there

    probed = _probe({**production_env, "DATABASE_URL": f"postgres://postgres@127.0.0.1:{closed_port}/postgres"})

    assert probed["healthz"] == [503, {"status": "unavailable", "database": "unreachable"}]


def test_the_embedded_worker_consumes_every_queue_tasks_are_routed_to(tmp_path: Path) -> None:
    planned = services(host="127.0.0.1", port=8000, llm_base_url="http://vllm:8000/v1", llm_model="m",
                       model_cache=tmp_path)  # fmt: skip
    argv = next(service.argv for service in planned if service.name == "worker")

    consumed = set(argv[argv.index("--queues") + 1].split(","))
    routed = {route["queue"] for route in settings.CELERY_TASK_ROUTES.values()}
    assert consumed == routed | {settings.CELERY_TASK_DEFAULT_QUEUE}
    assert {"ingest", "embed", "llm", "verify", "celery"} <= consumed
    assert "--concurrency=1" in argv  # the in-process vector index allows one process


def test_worker_queues_lists_each_routed_queue_once_and_the_default_last() -> None:
    routes = {"a.x": {"queue": "llm"}, "a.y": {"queue": "embed"}, "a.z": {"queue": "llm"}, "a.w": {"queue": "celery"}}

    assert worker_queues(routes=routes, default_queue="celery") == ["embed", "llm", "celery"]


@pytest.mark.django_db
def test_the_daily_sync_starts_an_updates_job_like_the_admin_form(django_capture_on_commit_callbacks: Capture) -> None:
    with django_capture_on_commit_callbacks() as queued:
        job_id = pubmed_updates_sync_daily_task.apply().get()

    assert job_id is not None
    job = IndexJob.objects.get(pk=job_id)
    assert job.kind == IndexJob.Kind.UPDATES
    assert job.started_by is None
    assert len(queued) == 1  # the listing task, queued once the job is committed


@pytest.mark.django_db
def test_the_daily_sync_skips_while_an_updates_job_is_still_running() -> None:
    running = IndexJob.objects.create(kind=IndexJob.Kind.UPDATES, status=IndexJob.Status.RUNNING)

    assert pubmed_updates_sync_daily_task.apply().get() is None
    assert list(IndexJob.objects.all()) == [running]
