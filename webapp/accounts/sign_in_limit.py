"""The limit on failed sign-ins (django-axes, configured in settings), where its own middleware does not reach.

Axes counts failures through Django's `authenticate` and its signals, so every sign-in shares one count per
username and address. Its middleware turns a refusal into the locked-out page, but only for the Django request it
sees: the API's token exchange authenticates with DRF's request object, so the API asks here instead.
"""

from __future__ import annotations

from typing import Any

from axes.helpers import get_client_ip_address
from axes.utils import reset
from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser


def sign_in_locked_out(request: Any) -> bool:
    """Whether axes refused the sign-in `authenticate` was just given `request` for (it marks that object)."""
    return bool(getattr(request, "axes_locked_out", False))


def cooloff_seconds() -> int:
    """How long a locked-out username and address wait; every try meanwhile starts the wait again."""
    return int(settings.AXES_COOLOFF_TIME.total_seconds())


def locked_out_message() -> str:
    minutes = round(cooloff_seconds() / 60)
    return (
        "Too many failed sign-ins for this account from your address. "
        f"Try again in {minutes} minute{'' if minutes == 1 else 's'}."
    )


def sign_in_succeeded(request: Any, user: AbstractBaseUser) -> None:
    """Start the count again, as a sign-in on the site does (AXES_RESET_ON_SUCCESS).

    Axes resets on Django's `user_logged_in` signal, which a token exchange never sends: it starts no session.
    """
    if settings.AXES_ENABLED and settings.AXES_RESET_ON_SUCCESS:
        reset(ip=get_client_ip_address(request), username=user.get_username())
