"""Tests for the embedded broker's transport: chosen for `sqla+` URLs only, polled every 0.1 s, and a real queue."""

from __future__ import annotations

import json
from pathlib import Path

import kombu
import pytest

from tests.support import run_with_django_settings
from webapp.broker_transport import Transport
from webapp.celery import app as celery_app

PROBE = (
    "import json, django; django.setup(); from django.conf import settings; "
    "print(json.dumps([settings.CELERY_BROKER_URL, getattr(settings, 'CELERY_BROKER_TRANSPORT', None)]))"
)


def broker_settings(tmp_path: Path, **env: str) -> list[str | None]:
    result = run_with_django_settings({"VERIMED_VAR_DIR": str(tmp_path), **env}, "-c", PROBE)
    assert result.returncode == 0, result.stderr
    probed: list[str | None] = json.loads(result.stdout.strip().splitlines()[-1])
    return probed


def test_the_embedded_default_broker_uses_the_fast_polling_transport(tmp_path: Path) -> None:
    assert broker_settings(tmp_path) == [
        f"sqlite:///{tmp_path / 'celery-broker.sqlite'}",
        "webapp.broker_transport:Transport",
    ]


@pytest.mark.parametrize("url", ["redis://127.0.0.1:6379/0", "amqp://guest:guest@127.0.0.1:5672//"])
def test_other_brokers_are_left_to_kombu(tmp_path: Path, url: str) -> None:
    assert broker_settings(tmp_path, CELERY_BROKER_URL=url) == [url, None]


def test_the_celery_app_connects_through_it() -> None:
    with celery_app.connection_for_write() as connection:
        assert isinstance(connection.transport, Transport)
        assert connection.transport.polling_interval == 0.1


def test_a_message_goes_through_a_real_sqlite_queue(tmp_path: Path) -> None:
    with kombu.Connection(f"sqlite:///{tmp_path / 'broker.sqlite'}", transport=Transport) as connection:
        queue = connection.SimpleQueue("verimed-test")
        queue.put({"question_id": 7})
        message = queue.get(timeout=5)
        message.ack()
        queue.close()

    assert message.payload == {"question_id": 7}
