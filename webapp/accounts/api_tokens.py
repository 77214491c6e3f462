"""A person's API token (DRF's one `Token` per user): rotated on request, revoked on request and whenever the
password changes, so a token that leaked stops working once its owner notices or changes their password."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from rest_framework.authtoken.models import Token

from webapp.accounts.roles import AnyUser


def api_token_rotate(*, user: AnyUser) -> Token:
    """A new token for `user`; the one they had stops working at once."""
    with transaction.atomic():
        Token.objects.filter(user=user).delete()
        token: Token = Token.objects.create(user=user)
    return token


def api_token_revoke(*, user: AnyUser) -> bool:
    """Delete `user`'s token; False when they had none."""
    deleted, _ = Token.objects.filter(user=user).delete()
    return int(deleted) > 0


def api_token_of(*, user: AnyUser) -> Token | None:
    token: Token | None = Token.objects.filter(user=user).first()
    return token


def note_password_change(sender: type[AbstractBaseUser], instance: AbstractBaseUser, **kwargs: Any) -> None:
    """pre_save: mark a user whose stored password hash is about to change (set_password, the admin, a reset, the
    changepassword command alike), for revoke_token_after_password_change."""
    update_fields = kwargs.get("update_fields")
    if kwargs.get("raw") or instance.pk is None or (update_fields is not None and "password" not in update_fields):
        return
    stored = sender._default_manager.filter(pk=instance.pk).values_list("password", flat=True).first()
    instance._verimed_password_changed = stored is not None and stored != instance.password  # type: ignore[attr-defined]


def revoke_token_after_password_change(
    sender: type[AbstractBaseUser], instance: AbstractBaseUser, **kwargs: Any
) -> None:
    """post_save: a new password ends the old token, as it ends other sessions: whoever held it must ask again."""
    if getattr(instance, "_verimed_password_changed", False):
        instance._verimed_password_changed = False  # type: ignore[attr-defined]
        api_token_revoke(user=instance)
