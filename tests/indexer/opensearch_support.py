"""An in-memory OpenSearch (osmem-server) for the tests, names for throw-away indices, and an address nobody serves."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def running_osmem() -> Iterator[str]:
    """Start osmem-server and yield its URL; the process stops when the block ends (or the test process does)."""
    from osmem_server import OsmemServer

    # Not frozen: the tests write into the base cluster, each into an index of its own. No Japanese analysis: the
    # corpus is English and the dictionary only slows the start.
    server = OsmemServer.start(freeze=False, japanese=False)
    try:
        yield server.url
    finally:
        server.close()


def fresh_index_name() -> str:
    return f"verimed-test-{uuid.uuid4().hex[:12]}"


def unreachable_url() -> str:
    """A local URL that refuses connections: a port the OS just handed out and took back."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"
