"""The address a sign-in comes from, as django-axes counts failures by it (settings.AXES_CLIENT_IP_CALLABLE)."""

from __future__ import annotations

import ipaddress

from django.http import HttpRequest


def socket_client_address(request: HttpRequest) -> str | None:
    """The peer of the connection: the client itself when nothing stands in between."""
    address: str | None = request.META.get("REMOTE_ADDR")
    return address


def forwarded_client_address(request: HttpRequest) -> str | None:
    """The address the TLS proxy in front saw, i.e. the last X-Forwarded-For entry.

    The proxy appends the peer it saw to whatever X-Forwarded-For the client sent, so only the last entry is the
    proxy's word: the ones before it are the client's and would let a guesser pick a fresh address for every try.
    Anything that is not an address (no proxy after all, a misconfigured one) falls back to the socket's peer, which
    also keeps junk out of axes' address column.
    """
    forwarded: str = request.META.get("HTTP_X_FORWARDED_FOR", "")
    last = forwarded.rsplit(",", 1)[-1].strip()
    try:
        return str(ipaddress.ip_address(last))
    except ValueError:
        return socket_client_address(request)
