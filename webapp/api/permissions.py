"""DRF permission classes over the site's roles: `user_has_role` decides, these only adapt it to DRF."""

from __future__ import annotations

from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.views import APIView

from webapp.accounts.roles import RESEARCHER, user_has_role


class HasRole(BasePermission):
    """Lets in callers holding `role` or a role above it. Subclass per role, setting `role` and `message`."""

    role: str
    message: str

    def has_permission(self, request: Request, view: APIView) -> bool:
        return user_has_role(request.user, self.role)


class IsResearcher(HasRole):
    role = RESEARCHER
    message = "this endpoint needs the researcher role"


# DRF answers 401 when no credentials came (or bad ones), 403 when the caller lacks the role.
RESEARCHER_ONLY = [IsAuthenticated, IsResearcher]
