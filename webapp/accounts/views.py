"""The API token page: each signed-in person sees whether they hold a token, makes a new one (shown once) and
revokes it. Parse, call a service, render."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from webapp.accounts.api_tokens import api_token_of, api_token_revoke, api_token_rotate


@require_GET
@login_required
def api_token_page(request: HttpRequest) -> HttpResponse:
    return render(request, "accounts/api_token.html", {"token": api_token_of(user=request.user), "new_key": None})


@require_POST
@login_required
def api_token_new(request: HttpRequest) -> HttpResponse:
    # Rendered, not redirected: the key is shown on this one response and never again.
    token = api_token_rotate(user=request.user)
    return render(request, "accounts/api_token.html", {"token": token, "new_key": token.key})


@require_POST
@login_required
def api_token_delete(request: HttpRequest) -> HttpResponse:
    if api_token_revoke(user=request.user):
        messages.success(request, "Your API token is revoked: calls that send it are refused from now on.")
    else:
        messages.info(request, "You had no API token.")
    return redirect("account-api-token")
