"""The address a sign-in comes from, as django-axes counts failures by it (settings.AXES_CLIENT_IP_CALLABLE)."""

from __future__ import annotations

import ipaddress

from django.conf import settings
from django.http import HttpRequest


def socket_client_address(request: HttpRequest) -> str | None:
    """The peer of the connection: the client itself when nothing stands in between."""
    address: str | None = request.META.get("REMOTE_ADDR")
    return address


def forwarded_client_address(request: HttpRequest) -> str | None:
    """The address the TLS proxy in front saw, i.e. the last X-Forwarded-For entry, when the connection comes from
    that proxy (VERIMED_TRUSTED_PROXIES); otherwise the socket's peer.

    The proxy appends the peer it saw to whatever X-Forwarded-For the client sent, so only the last entry is the
    proxy's word: the ones before it are the client's and would let a guesser pick a fresh address for every try.
    The same holds for the whole header when a client reaches the app without the proxy (a published port, another
    container): then the header is the client's own word, so it counts only on connections from a trusted proxy.
    Anything that is not an address (no proxy after all, a misconfigured one) falls back to the socket's peer, which
    also keeps junk out of axes' address column.
    """
    peer = socket_client_address(request)
    if not _is_trusted_proxy(peer):
        return peer
    forwarded: str = request.META.get("HTTP_X_FORWARDED_FOR", "")
    last = forwarded.rsplit(",", 1)[-1].strip()
    try:
        return str(ipaddress.ip_address(last))
    except ValueError:
        return peer


def _is_trusted_proxy(peer: str | None) -> bool:
    try:
        address = ipaddress.ip_address(peer or "")
    except ValueError:
        return False
    return any(address in network for network in settings.VERIMED.deployment.trusted_proxies)
