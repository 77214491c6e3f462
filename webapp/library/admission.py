"""What a researcher may start in their library now, checked before any file is read: the hourly limit on library work,
the room their library has left, and the site's queue valve.

Every check runs with the owner's row locked, and the action is recorded in the same transaction, so uploads sent in
parallel cannot all slip under a limit. The queue valve is qa's (it counts questions, deep checks and library
indexing together); qa sits above the library in the layers, so it hands the check in when Django starts
(QaConfig.ready), as it hands in the rest of its wiring.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from webapp.library.models import LibraryAction
from webapp.library.selectors import library_usage

WINDOW = timedelta(hours=1)


class DocumentRefusedError(Exception):
    """An upload refused, with the reason for the uploader and the HTTP status that says what kind of refusal."""

    def __init__(self, message: str, *, http_status: int = 400, retry_after_seconds: int | None = None) -> None:
        super().__init__(message)
        self.http_status = http_status
        self.retry_after_seconds = retry_after_seconds


_queue_full_reason: Callable[[], str | None] = lambda: None  # noqa: E731  # until qa hands its valve in


def library_queue_valve_set(reason: Callable[[], str | None]) -> None:
    """qa's queue valve: None while there is room for more work, else the "busy" message to refuse it with."""
    global _queue_full_reason
    _queue_full_reason = reason


def library_work_admit(*, owner_pk: int, kind: LibraryAction.Kind, adding_bytes: int | None = None) -> None:
    """Admit one upload (`adding_bytes` of file) or one indexing, and record it; DocumentRefusedError says why not.

    Runs in a transaction of its own, committed before the file is read: a read costs the web worker its time
    whether the file is then kept or refused, so the attempt counts.
    """
    with transaction.atomic():
        get_user_model().objects.select_for_update().filter(pk=owner_pk).first()
        _hourly_check(owner_pk)
        if adding_bytes is not None:
            library_room_check(owner_pk=owner_pk, adding=adding_bytes)
        busy = _queue_full_reason()
        if busy is not None:
            raise DocumentRefusedError(busy, http_status=503, retry_after_seconds=60)
        LibraryAction.objects.filter(owner_id=owner_pk, created_at__lte=timezone.now() - WINDOW).delete()
        LibraryAction.objects.create(owner_id=owner_pk, kind=kind)


def _hourly_check(owner_pk: int) -> None:
    per_hour = settings.VERIMED.limits.library_actions_per_hour
    if not per_hour:
        return
    now = timezone.now()
    recent = LibraryAction.objects.filter(owner_id=owner_pk, created_at__gt=now - WINDOW).order_by("-created_at")
    oldest_counted = list(recent.values_list("created_at", flat=True)[per_hour - 1 : per_hour])
    if not oldest_counted:
        return
    again = oldest_counted[0] + WINDOW
    wait = max(1, math.ceil((again - now).total_seconds()))
    raise DocumentRefusedError(
        f"you have uploaded or indexed {per_hour} times in the last hour, the most allowed; you can again at "
        f"{again:%H:%M} UTC (in {math.ceil(wait / 60)} min)",
        http_status=429,
        retry_after_seconds=wait,
    )


def library_room_check(*, owner_pk: int, adding: int) -> None:
    limits = settings.VERIMED.limits
    count, size = library_usage(owner_id=owner_pk)
    if limits.library_max_documents and count >= limits.library_max_documents:
        raise DocumentRefusedError(
            f"your library holds {count} documents, the most it may; delete some to add more", http_status=403
        )
    if limits.library_max_bytes and size + adding > limits.library_max_bytes:
        raise DocumentRefusedError(
            f"your library holds {size_in_words(size)} of files; this one would take it past the limit of "
            f"{size_in_words(limits.library_max_bytes)}: delete some to add more",
            http_status=403,
        )


def size_in_words(size: int) -> str:
    """Bytes below a MiB (a limit set low, a small file), MiB above, where a decimal place is enough."""
    return f"{size:,} bytes" if size < 1024 * 1024 else f"{size / (1024 * 1024):.1f} MiB"
