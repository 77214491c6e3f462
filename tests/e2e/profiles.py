"""The two profiles the end-to-end tests run on, as the environment each adds to the stack's processes.

The embedded default needs nothing. The production profile gets the engines docker-compose.yml runs, here on this
machine: a throw-away PostgreSQL database, a Redis database as the broker, osmem-server for the OpenSearch API and
qdrant-client's local mode for the vector API. The llama.cpp server stands in for vLLM in both.
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import redis
from psycopg import sql

from tests.indexer.opensearch_support import running_osmem

PROFILES = ("embedded", "production")
POSTGRES_SERVER = "postgres://postgres@127.0.0.1:5432"
REDIS_SERVER = "redis://127.0.0.1:6379"
# Marks a Redis database as taken by one test run, so two runs on one machine never share a broker.
_REDIS_CLAIM_KEY = "verimed-e2e-claim"


@contextmanager
def profile_env(
    profile: str, var_dir: Path, *, postgres_server: str = POSTGRES_SERVER, redis_server: str = REDIS_SERVER
) -> Iterator[dict[str, str]]:
    """The environment `profile` adds; the production profile's database and broker live on the servers given (the
    machine's own by default; a restart drill brings its own, to restart them)."""
    if profile == "embedded":
        yield {}
        return
    if profile != "production":
        raise ValueError(f"unknown profile {profile!r} (known: {', '.join(PROFILES)})")
    with (
        _postgres_database(postgres_server) as database_url,
        _redis_database(redis_server) as broker_url,
        running_osmem() as opensearch_url,
    ):
        yield {
            "VERIMED_PRODUCTION": "true",
            "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
            # The browser talks plain http to gunicorn on loopback, with no TLS proxy in front: the transport
            # settings VERIMED_PRODUCTION turns on are switched off here (test_deploy_settings.py covers them).
            "DJANGO_BEHIND_TLS_PROXY": "false",
            "DJANGO_SECURE_SSL_REDIRECT": "false",
            "DJANGO_SESSION_COOKIE_SECURE": "false",
            "DJANGO_CSRF_COOKIE_SECURE": "false",
            "DJANGO_SECURE_HSTS_SECONDS": "0",
            "DATABASE_URL": database_url,
            "CELERY_BROKER_URL": broker_url,
            "VERIMED_LEXICAL_BACKEND": "opensearch",
            "VERIMED_OPENSEARCH_URL": opensearch_url,
            "VERIMED_VECTOR_BACKEND": "qdrant",
            # qdrant-client's local mode: the same client calls as against a server, in the worker's process.
            "VERIMED_QDRANT_URL": str(var_dir / "qdrant-local"),
        }


@contextmanager
def _postgres_database(server: str) -> Iterator[str]:
    name = f"verimed_e2e_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield f"{server}/{name}"
    finally:
        with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@contextmanager
def _redis_database(server: str) -> Iterator[str]:
    """The highest-numbered Redis database no other run holds; emptied when the block ends."""
    for number in range(15, 0, -1):
        client = redis.Redis.from_url(f"{server}/{number}")
        if client.dbsize() == 0 and client.set(_REDIS_CLAIM_KEY, "1", nx=True):
            break
        client.close()
    else:
        raise RuntimeError(f"no free database on the Redis server at {server} (1 to 15 all hold keys)")
    try:
        yield f"{server}/{number}"
    finally:
        client.flushdb()
        client.close()
