"""Sign-in and the three roles (researcher, reviewer, admin), kept as Django groups."""

from __future__ import annotations

from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "webapp.accounts"
    label = "accounts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.contrib.auth import get_user_model
        from django.db.models.signals import post_save, pre_save

        from webapp.accounts.api_tokens import note_password_change, revoke_token_after_password_change

        user_model = get_user_model()
        pre_save.connect(note_password_change, sender=user_model, dispatch_uid="verimed-note-password-change")
        post_save.connect(
            revoke_token_after_password_change, sender=user_model, dispatch_uid="verimed-revoke-token-on-password"
        )
