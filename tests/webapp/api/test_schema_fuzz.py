"""The API fuzzed from its own OpenAPI schema (docs/openapi.yaml) with Schemathesis, in process through the site's WSGI
application: no server, the test's database.

Stateless: every operation, as each caller (anonymous, researcher, reviewer, admin), with inputs the schema allows and
inputs it forbids. Stateful: runs of calls that follow the schema's links (ask, then read, cancel, watch or deep-check
what was asked; list, then read the first one; read an answer, then the paper it retrieved), as each role. Every
response is checked for:
- no 5xx;
- the status code, content type, documented headers and body the schema gives;
- authentication enforced where the schema declares it: the same call without the token, or with a wrong one, is
  refused (`ignored_auth`);
- a 4xx body that is JSON with at least one message in words (`refusals_say_why`);
- in a run of calls: what was just created can be read (`ensure_resource_availability`), what was deleted cannot
  (`use_after_free`).
Left out: that every input the schema allows is accepted and every input it forbids refused (`positive_data_acceptance`,
`negative_data_rejection`). A schema cannot say that a flagged question must exist or that a follow-up's parent must be
answered, and DRF reads an empty form or query value as "not given" (`?status=` lists every status), by design.

Nothing reaches a model: the test's transaction is never committed, so `transaction.on_commit` hands no task to the
broker. Asking stores a queued question and a deep check a queued check, as in tests/webapp/api/test_api.py.

`make test` runs a bounded number of examples from a fixed seed. By hand, a longer run from a random seed, with the
coverage phase (the boundary values of every parameter) and longer runs of calls:
    VERIMED_FUZZ_EXAMPLES=2000 .venv/bin/pytest tests/webapp/api/test_schema_fuzz.py
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import hypothesis
import pytest
import schemathesis
from django.conf import settings
from django.contrib.auth.models import User
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, transaction
from rest_framework.authtoken.models import Token

from tests.webapp.factories import (
    answer_with_three_verdicts,
    deep_check_stored,
    follow_up_of,
    notification_stored,
    recheck_stored,
)
from webapp.accounts.roles import ADMIN, RESEARCHER, REVIEWER
from webapp.review.services import flag_create
from webapp.wsgi import application

SCHEMA_FILE = Path(__file__).resolve().parents[3] / "docs" / "openapi.yaml"
LONG_RUN = "VERIMED_FUZZ_EXAMPLES" in os.environ
# Per operation and caller (stateless), and runs of calls per role (stateful). 10 keeps the module near 40 s here.
EXAMPLES = int(os.environ.get("VERIMED_FUZZ_EXAMPLES", "10"))
STEPS = 50 if LONG_RUN else 10  # the longest run of calls

ANONYMOUS = "anonymous"
CALLERS = (ANONYMOUS, RESEARCHER, REVIEWER, ADMIN)

schema = schemathesis.openapi.from_path(SCHEMA_FILE)
schema.app = application  # the product's WSGI entry point, as gunicorn serves it
schema.config.checks.update(excluded_check_names=["positive_data_acceptance", "negative_data_rejection"])
# The coverage phase alone takes longer than the rest of the module together: long runs only.
schema.config.phases.update(phases=["examples", "fuzzing", "stateful", *(["coverage"] if LONG_RUN else [])])

HYPOTHESIS_SETTINGS = hypothesis.settings(
    max_examples=EXAMPLES,
    stateful_step_count=STEPS,
    deadline=None,
    derandomize=not LONG_RUN,  # `make test` must not pass or fail by luck; long runs explore
    # One database and one set of users serve every example of a test, on purpose.
    suppress_health_check=list(hypothesis.HealthCheck),
)


class _Caller:
    """Whose token the calls carry: set by the `caller` fixture, None for anonymous calls."""

    token: str | None = None


@schema.auth(refresh_interval=None)  # never cached: each test is another caller
class CallerToken:
    """Sends the caller's token the way the schema declares it (tokenAuth), so that `ignored_auth` can take it away
    or replace it with a wrong one and expect a refusal."""

    def get(self, case: schemathesis.Case, context: schemathesis.AuthContext) -> str | None:
        return _Caller.token

    def set(self, case: schemathesis.Case, data: str, context: schemathesis.AuthContext) -> None:
        case.headers = {**(case.headers or {}), "Authorization": f"Token {data}"}


def _messages(body: object) -> list[object]:
    if isinstance(body, dict):
        return [message for value in body.values() for message in _messages(value)]
    if isinstance(body, list):
        return [message for value in body for message in _messages(value)]
    return [body]


def refusals_say_why(ctx: schemathesis.CheckContext, response: schemathesis.Response, case: schemathesis.Case) -> None:
    """A 4xx is JSON, `{"detail": "..."}` or DRF's field → messages, and every message is words (at any depth)."""
    if not 400 <= response.status_code < 500:
        return
    content_type = response.headers.get("content-type", [""])[0]
    assert content_type.startswith("application/json"), f"a {response.status_code} in {content_type}, not JSON"
    body = json.loads(response.content)
    messages = _messages(body)
    assert isinstance(body, dict), f"a {response.status_code} whose body is not an object: {body!r}"
    assert messages, f"a {response.status_code} without a message: {body!r}"
    unclear = [m for m in messages if not (isinstance(m, str) and any(c.isalpha() for c in m))]
    assert not unclear, f"a {response.status_code} whose messages are not words: {unclear!r} in {body!r}"


@pytest.fixture(autouse=True)
def connection_kept() -> Iterator[None]:
    """The WSGI handler closes the database connection after each request; the test's transaction lives on it.
    Django's test client holds the same signal back for the same reason."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def api_data(role_users: dict[str, User]) -> None:
    """Something of everything for the links to reach: two answered questions of the researcher's, the first with a
    follow-up; the newest (first in the list, where the links start) with a finished deep check, a flag, a re-check
    and its notification."""
    assert not settings.VERIMED.tasks.eager  # tasks would run inside the request: see the module's docstring
    first = answer_with_three_verdicts(user=role_users[RESEARCHER])
    follow_up_of(parent=first, text="Is it safe in children?", answer_text="Yes (PUBMED:111).")
    question = answer_with_three_verdicts(user=role_users[RESEARCHER], text="Does everolimus inhibit mTORC1?")
    deep_check_stored(question=question)
    flag_create(question=question, sentence_position=0, reason="unsupported", user=role_users[RESEARCHER])
    notification_stored(user=role_users[RESEARCHER], recheck=recheck_stored(question=question))


@pytest.fixture
def caller(request: pytest.FixtureRequest, role_users: dict[str, User], api_data: None) -> Iterator[str]:
    name: str = request.param
    if name != ANONYMOUS:
        _Caller.token = Token.objects.get_or_create(user=role_users[name])[0].key
    yield name
    _Caller.token = None


# Each example, and each run of calls, starts from `api_data` alone and is undone after: Hypothesis replays an example
# to shrink it, and a question asked after 30 others (the hourly limit) would not answer as it did the first time.
@contextmanager
def _undone() -> Iterator[None]:
    savepoint = transaction.savepoint()
    try:
        yield
    finally:
        transaction.savepoint_rollback(savepoint)


@pytest.mark.django_db
@pytest.mark.parametrize("caller", CALLERS, indirect=True)
@schema.parametrize()
@HYPOTHESIS_SETTINGS
def test_every_operation_answers_as_documented(case: schemathesis.Case, caller: str) -> None:
    with _undone():
        case.call_and_validate(additional_checks=[refusals_say_why])


class Workflow(schema.as_state_machine()):  # type: ignore[misc]
    def setup(self) -> None:
        self.savepoint = transaction.savepoint()

    def teardown(self) -> None:
        transaction.savepoint_rollback(self.savepoint)

    def validate_response(
        self, response: Any, case: schemathesis.Case, additional_checks: Any = None, **kwargs: Any
    ) -> None:
        super().validate_response(response, case, additional_checks=[refusals_say_why], **kwargs)


@pytest.mark.django_db
@pytest.mark.parametrize("caller", CALLERS[1:], indirect=True)  # links start from a 2xx: anonymous gets none
def test_runs_of_linked_calls_answer_as_documented(caller: str) -> None:
    Workflow.run(settings=HYPOTHESIS_SETTINGS)
