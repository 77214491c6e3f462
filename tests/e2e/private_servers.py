"""A PostgreSQL cluster and a Redis server of a test's own, on free loopback ports, that a restart drill may kill and
start again without touching the machine's servers (which other runs use)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg
import redis

from tests.support import free_port

POSTGRES_BIN = Path("/usr/lib/postgresql/15/bin")


def _as_postgres(argv: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: as root, run its programs as the postgres user."""
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


@dataclass
class PrivatePostgres:
    data: Path
    port: int

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}"

    def _pg_ctl(self, *args: str) -> None:
        done = subprocess.run(
            _as_postgres([str(POSTGRES_BIN / "pg_ctl"), "-D", str(self.data / "db"), "-w", "-t", "60", *args]),
            capture_output=True,
            text=True,
            timeout=90,
        )
        assert done.returncode == 0, f"pg_ctl {args[0]}: {done.stdout}{done.stderr}"

    def _log(self) -> tuple[str, str]:
        # Always a log file: without one the server writes to pg_ctl's output, and holds our pipe open for good.
        return ("-l", str(self.data / "postgres.log"))

    def start(self) -> None:
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.data}"
        self._pg_ctl("-o", options, *self._log(), "start")

    def restart(self) -> None:
        """What a restart does to clients: every connection is terminated, and new ones are refused until it is up."""
        self._pg_ctl("-m", "fast", *self._log(), "restart")

    def stop(self) -> None:
        self._pg_ctl("-m", "immediate", "stop")


@contextmanager
def private_postgres() -> Iterator[PrivatePostgres]:
    data = Path(tempfile.mkdtemp(prefix="verimed-pg-"))
    if os.geteuid() == 0:
        shutil.chown(data, "postgres")
    server = PrivatePostgres(data=data, port=free_port())
    initdb = [str(POSTGRES_BIN / "initdb"), "-D", str(data / "db"), "-U", "postgres", "-A", "trust", "--no-sync"]
    done = subprocess.run(_as_postgres(initdb), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    server.start()
    try:
        with psycopg.connect(f"{server.url}/postgres") as check:
            check.execute("SELECT 1")
        yield server
    finally:
        server.stop()
        shutil.rmtree(data, ignore_errors=True)


@dataclass
class PrivateRedis:
    data: Path
    port: int
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    def start(self) -> None:
        # Nothing kept on disk, as the machine's Redis and a container without a volume: a restart loses every key.
        argv = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen(
            [*argv, "--dir", str(self.data)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                redis.Redis.from_url(self.url).ping()
                return
            except redis.ConnectionError:
                assert time.monotonic() < deadline, "the private Redis did not start"
                time.sleep(0.1)

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=30)
            self.process = None


@contextmanager
def private_redis() -> Iterator[PrivateRedis]:
    data = Path(tempfile.mkdtemp(prefix="verimed-redis-"))
    server = PrivateRedis(data=data, port=free_port())
    server.start()
    try:
        yield server
    finally:
        server.kill()
        shutil.rmtree(data, ignore_errors=True)
