"""The Celery application, configured from Django settings (CELERY_* names)."""

from __future__ import annotations

import os
from collections.abc import Collection
from typing import Any

from celery import Celery
from celery.signals import worker_process_init, worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")

app = Celery("verimed")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
app.autodiscover_tasks(related_name="periodic")  # scheduled work that starts jobs (webapp/corpus/periodic.py)

VERIFIER_QUEUES = frozenset({"llm", "verify"})


@worker_process_init.connect
def _warm_up_engines(**_: Any) -> None:
    """Each worker process owns the engines its queues use; loading them at start keeps the first question as fast
    as the rest. The pool process is forked after the worker applied `--queues`, so the app knows them here."""
    worker_warm_up(set(app.amqp.queues.consume_from))


def worker_warm_up(queues: Collection[str]) -> None:
    """Open the engines the queues use; have the model server read the answer prompt's constant part, and load the
    verifier, in the background where the queues use them."""
    from webapp.corpus import engines
    from webapp.qa.llm import warm_up_llm_in_background
    from webapp.qa.verification import warm_up_verifier_in_background

    engines.warm_up(engines.engines_for_queues(queues))
    if "llm" in queues:
        warm_up_llm_in_background()
    # A yes/no question's bottom line reads the verifier before its answer (the llm queue's generate stage); every
    # answer's sentences are verified on the verify queue.
    if not VERIFIER_QUEUES.isdisjoint(queues):
        warm_up_verifier_in_background()


@worker_ready.connect
def _start_heartbeat(sender: Any = None, **_: Any) -> None:
    """The worker's sign of life, from its main process: how a question waiting its turn is told from a lost one."""
    from webapp.qa.heartbeat import heartbeat_start

    name = getattr(sender, "hostname", None) or app.conf.get("worker_hostname") or f"worker@{os.getpid()}"
    heartbeat_start(name=str(name), queues=app.amqp.queues.consume_from)
