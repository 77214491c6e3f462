"""Sign-in and the three roles (researcher, reviewer, admin), kept as Django groups."""

from __future__ import annotations

from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "webapp.accounts"
    label = "accounts"
    default_auto_field = "django.db.models.BigAutoField"
