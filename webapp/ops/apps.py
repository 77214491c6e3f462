"""Operations: the commands `make run` uses to prepare and start the embedded profile."""

from __future__ import annotations

from django.apps import AppConfig


class OpsConfig(AppConfig):
    name = "webapp.ops"
    label = "ops"
