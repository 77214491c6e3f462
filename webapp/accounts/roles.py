"""Roles are Django groups. Each role includes the ones below it: admin > reviewer > researcher.

Superusers hold every role. Views ask `user_has_role`; nothing else in the site reads group names.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, Final, TypeVar

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, Group
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, JsonResponse

RESEARCHER: Final = "researcher"
REVIEWER: Final = "reviewer"
ADMIN: Final = "admin"
ROLES: Final = (RESEARCHER, REVIEWER, ADMIN)
# What each group grants, itself included.
_GRANTS: Final = {RESEARCHER: {RESEARCHER}, REVIEWER: {RESEARCHER, REVIEWER}, ADMIN: set(ROLES)}

AnyUser = AbstractBaseUser | AnonymousUser


def user_roles(user: AnyUser | None) -> frozenset[str]:
    if user is None or not user.is_authenticated:
        return frozenset()
    if getattr(user, "is_superuser", False):
        return frozenset(ROLES)
    names = set(Group.objects.filter(user__pk=user.pk).values_list("name", flat=True))
    return frozenset(role for name in names if name in _GRANTS for role in _GRANTS[name])


def user_has_role(user: AnyUser | None, role: str) -> bool:
    return role in user_roles(user)


def user_assign_role(*, user: AbstractBaseUser, role: str) -> None:
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}; roles are {', '.join(ROLES)}")
    group, _ = Group.objects.get_or_create(name=role)
    user.groups.add(group)  # type: ignore[attr-defined]


View = TypeVar("View", bound=Callable[..., HttpResponse])


def _wants_json(request: HttpRequest) -> bool:
    return request.path.endswith(".json") or "application/json" in request.headers.get("Accept", "")


def role_required(role: str) -> Callable[[View], View]:
    """Anonymous visitors go to sign-in (JSON callers get 401); signed-in users without the role get 403."""

    def decorate(view: View) -> View:
        @wraps(view)
        def guarded(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if not request.user.is_authenticated:
                if _wants_json(request):
                    return JsonResponse({"error": "sign in first"}, status=401)
                return redirect_to_login(request.get_full_path())
            if not user_has_role(request.user, role):
                raise PermissionDenied(f"this page needs the {role} role")
            return view(request, *args, **kwargs)

        return guarded  # type: ignore[return-value]

    return decorate
