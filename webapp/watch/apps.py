"""Watched answers: re-checked after the corpus changes, without being rewritten; what changed is shown on the
answer and in the watcher's notifications."""

from __future__ import annotations

from django.apps import AppConfig


class WatchConfig(AppConfig):
    name = "webapp.watch"
    label = "watch"

    def ready(self) -> None:
        # The corpus announces finished jobs with a signal; it never imports this app.
        from webapp.watch import receivers  # noqa: F401
