"""The hourly limits hold under requests sent in parallel, on PostgreSQL as production runs it.

Each limit counts a person's rows and then inserts one. The posts here run in threads of one process against a
throw-away PostgreSQL database (each thread has its own connection), with the count slowed down, so that without the
person's lock every request would count the same rows and pass.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from tests.support import run_with_django_settings

POSTGRES_SERVER = "postgres://postgres@127.0.0.1:5432"

# Eight API posts at once by one researcher whose limit is three questions (and five model actions) an hour.
CONCURRENT_POSTS = """
import json, sys, threading, time
import django
django.setup()
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

call_command("migrate", verbosity=0)
from webapp.accounts.roles import RESEARCHER, user_assign_role
from webapp.qa import rate_limit
from webapp.qa.services import admission

user = User.objects.create_user("racer", password="a-long-test-password")
user_assign_role(user=user, role=RESEARCHER)
token = Token.objects.create(user=user).key
admission.question_enqueue = lambda **kwargs: None  # no broker here: only the admission is under test


def slowed(count):
    def counted(**kwargs):
        found = count(**kwargs)
        time.sleep(0.3)  # every parallel request gets here before any inserts
        return found
    return counted


admission.question_ask_again_at = slowed(rate_limit.question_ask_again_at)
admission.model_action_again_at = slowed(rate_limit.model_action_again_at)
what = sys.argv[1]
start = threading.Barrier(8)
statuses = []


def post(number):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    start.wait()
    try:
        if what == "questions":
            asked = {"question": f"Is metformin safe, try {number}?"}
            response = client.post("/api/v1/questions", asked, format="json")
            statuses.append(response.status_code)
        else:
            from webapp.qa.models import ModelAction
            try:
                admission.model_work_admit(user=user, kind=ModelAction.Kind.DEEP_CHECK, queued=False)
                statuses.append(202)
            except admission.QuestionRateLimitedError:
                statuses.append(429)
    finally:
        connection.close()


threads = [threading.Thread(target=post, args=(number,)) for number in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
from webapp.qa.models import ModelAction, Question
print(json.dumps({"statuses": sorted(statuses), "questions": Question.objects.count(),
                  "actions": ModelAction.objects.count()}))
"""


@pytest.fixture
def postgres_database() -> Iterator[str]:
    name = f"verimed_race_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(f"{POSTGRES_SERVER}/postgres", autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield f"{POSTGRES_SERVER}/{name}"
    finally:
        with psycopg.connect(f"{POSTGRES_SERVER}/postgres", autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def _posted(what: str, database_url: str, tmp_path: Path) -> dict[str, object]:
    env = {
        "DATABASE_URL": database_url,
        "VERIMED_VAR_DIR": str(tmp_path / "var"),
        "VERIMED_QUESTIONS_PER_HOUR": "3",
        "VERIMED_MODEL_ACTIONS_PER_HOUR": "5",
        "VERIMED_MAX_QUEUED_QUESTIONS": "0",
        "VERIMED_LOGIN_FAILURE_LIMIT": "0",
        "DJANGO_ALLOWED_HOSTS": "testserver",
    }
    result = run_with_django_settings(env, "-c", CONCURRENT_POSTS, what)
    assert result.returncode == 0, result.stderr
    found: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    return found


def test_eight_questions_posted_at_once_on_postgresql_get_three_in_and_five_refused(
    postgres_database: str, tmp_path: Path
) -> None:
    found = _posted("questions", postgres_database, tmp_path)

    assert found["statuses"] == [201] * 3 + [429] * 5, found
    assert found["questions"] == 3


def test_eight_model_actions_admitted_at_once_on_postgresql_stop_at_the_hourly_limit(
    postgres_database: str, tmp_path: Path
) -> None:
    found = _posted("actions", postgres_database, tmp_path)

    assert found["statuses"] == [202] * 5 + [429] * 3, found
    assert found["actions"] == 5
