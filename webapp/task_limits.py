"""The longest time limits of any task, where settings.py can read them (it cannot import the tasks themselves)."""

from __future__ import annotations

from typing import Final

# A baseline file holds ~30k citations, and a rebuild re-embeds the whole corpus: on two CPU cores these take far
# longer than a question's limit (webapp/corpus/tasks.py).
LONG_TASK_SOFT_TIME_LIMIT: Final = 4 * 3600
LONG_TASK_TIME_LIMIT: Final = LONG_TASK_SOFT_TIME_LIMIT + 120
# How long Redis keeps a delivered, unacknowledged task from every other worker. With `acks_late` a task is
# acknowledged when it ends, so the timeout must outlast the longest run, or a second worker receives the task
# while the first still runs it (Celery's default is one hour). The hour above the limit covers retries' countdowns.
# The cost: a task whose worker vanished without a word (a host lost, not a process killed, which Celery requeues
# at once) waits this long before another worker takes it.
BROKER_VISIBILITY_MARGIN_SECONDS: Final = 3600


def broker_visibility_timeout(*, task_time_limit: int) -> int:
    """Seconds above every task's hard time limit: the long tasks' and the site's default (VERIMED_TASK_TIME_LIMIT)."""
    return max(LONG_TASK_TIME_LIMIT, task_time_limit) + BROKER_VISIBILITY_MARGIN_SECONDS
