"""One copy of a long task at a time: a lock a running task holds on a file, which the kernel drops when its process
dies.

A task that runs for hours (a rebuild, a baseline file's embedding) can reach a second worker while the first still
runs it: redelivered by the broker (Redis hands an unacknowledged task on once its visibility timeout passes), or
published twice. The second copy must do nothing while the first is alive, and take over once it is gone (a worker
killed mid-task, whose task `reject_on_worker_lost` puts back). A row in the database cannot tell those apart, since a
dead worker leaves its row as it was; a lock on a file can. The files live in `VERIMED_VAR_DIR`, which every worker
of a site shares (docker-compose.yml's `verimed-data` volume on one host; the embedded profile's one folder).
"""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings


@contextmanager
def running_alone(name: str) -> Iterator[bool]:
    """True inside the block when this copy holds `name`'s lock; False when another copy holds it (still running).

    The lock is per open file, so two copies in one process (threads, an eager task beside a worker) exclude each
    other too.
    """
    folder = settings.VERIMED.paths.var_dir / "task-locks"
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / f"{name}.lock").open("wb") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
