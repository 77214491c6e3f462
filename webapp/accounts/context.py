"""The navigation each page shows depends on the signed-in person's roles."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.urls import NoReverseMatch, reverse

from webapp.accounts.roles import ADMIN, RESEARCHER, REVIEWER, user_roles

# (label, url name, role needed); links whose page is not installed are left out.
NAVIGATION = (
    ("Ask", "ask", RESEARCHER),
    ("History", "history", RESEARCHER),
    ("Library", "library", RESEARCHER),
    ("Review queue", "review-queue", REVIEWER),
    ("Index", "index-status", ADMIN),
    ("Admin", "admin:index", ADMIN),
)


def navigation(request: HttpRequest) -> dict[str, Any]:
    roles = user_roles(getattr(request, "user", None))
    links = []
    for label, name, role in NAVIGATION:
        if role not in roles:
            continue
        try:
            url = reverse(name)
        except NoReverseMatch:
            continue
        current = request.path == url if name == "ask" else request.path.startswith(url)
        links.append({"label": label, "url": url, "current": current})
    return {"nav_links": links, "user_roles": roles}
