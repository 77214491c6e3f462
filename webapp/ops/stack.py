"""Starting and stopping the embedded profile's processes: the site, a Celery worker, the local LLM server and the
background embedder.

Each process runs in its own session (so it outlives `make run`), with a pid file in var/run and a log in var/log.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

# What `manage.py embed_pending --follow` prints once it is up (that command imports this).
EMBEDDER_READY_LINE = "background embedder ready"


@dataclass(frozen=True)
class Service:
    name: str
    argv: list[str]
    ready: Callable[[Path], bool]  # given the log path, whether the service is up
    ready_timeout: float
    # Where it listens: checked free before starting, or a server already there would pass the readiness check.
    listens_on: tuple[str, int] | None = None


def http_ok(url: str) -> Callable[[Path], bool]:
    def check(_log: Path) -> bool:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    return check


def log_says(text: str) -> Callable[[Path], bool]:
    def check(log: Path) -> bool:
        return log.exists() and text in log.read_text(errors="replace")

    return check


def port_in_use(host: str, port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return True
    return False


def is_local(url: str) -> bool:
    return urlparse(url).hostname in {"127.0.0.1", "localhost", "::1"}


def worker_queues(*, routes: Mapping[str, Mapping[str, str]], default_queue: str) -> list[str]:
    """Every queue a task is routed to (CELERY_TASK_ROUTES), plus the default one Celery's own tasks go to."""
    routed = sorted({route["queue"] for route in routes.values()} - {default_queue})
    return [*routed, default_queue]


def worker_argv(*, python: str, queues: Sequence[str]) -> list[str]:
    """The embedded profile's one worker: it consumes every queue, since nothing else would run those tasks."""
    return [
        python,
        "-m",
        "celery",
        "-A",
        "webapp",
        "worker",
        "--queues",
        ",".join(queues),
        "--pool=prefork",
        "--concurrency=1",
        "--loglevel=INFO",
        "--without-gossip",
        "--without-mingle",
    ]


def _configured_queues() -> list[str]:
    from django.conf import settings

    return worker_queues(routes=settings.CELERY_TASK_ROUTES, default_queue=settings.CELERY_TASK_DEFAULT_QUEUE)


def services(
    *,
    host: str,
    port: int,
    llm_base_url: str,
    llm_model: str,
    model_cache: Path,
    llm_server_kind: str = "llama.cpp",
    llm_context_tokens: int = 8192,
    llm_prompt_lookup_tokens: int = 0,
    queues: Sequence[str] | None = None,
) -> list[Service]:
    python = sys.executable
    manage_py = Path(__file__).resolve().parent.parent.parent / "manage.py"
    planned = []
    # Only a llama.cpp server is the stack's to run (generator.serve); a vLLM server, even on this machine, is run
    # by whoever configured it (generator.serve_vllm, or docker-compose in production).
    if llm_server_kind == "llama.cpp" and is_local(llm_base_url):
        llm = urlparse(llm_base_url)
        planned.append(
            Service(
                name="llm",
                argv=[
                    python,
                    "-m",
                    "generator.serve",
                    "--model",
                    llm_model,
                    "--host",
                    llm.hostname or "127.0.0.1",
                    "--port",
                    str(llm.port or 80),
                    "--cache",
                    str(model_cache),
                    # The window the packer counts on must be the one the server has.
                    "--n-ctx",
                    str(llm_context_tokens),
                    "--prompt-lookup-tokens",
                    str(llm_prompt_lookup_tokens),
                ],
                ready=http_ok(f"{llm_base_url.rstrip('/')}/models"),
                ready_timeout=300,
                listens_on=(llm.hostname or "127.0.0.1", llm.port or 80),
            )
        )
    planned.append(
        Service(
            name="worker",
            # One worker process: it owns the in-process vector index, which only one process may open.
            argv=worker_argv(python=python, queues=queues if queues is not None else _configured_queues()),
            ready=log_says(" ready."),
            ready_timeout=120,
        )
    )
    planned.append(
        Service(
            name="web",
            argv=[
                python,
                "-m",
                "gunicorn",
                "webapp.wsgi",
                "--bind",
                f"{host}:{port}",
                "--workers",
                "2",
                "--timeout",
                "60",
                "--access-logfile",
                "-",
            ],
            # /healthz answers plain http even where VERIMED_PRODUCTION redirects every other page to https.
            ready=http_ok(f"http://{host}:{port}/healthz"),
            ready_timeout=60,
            listens_on=(host, port),
        )
    )
    planned.append(
        Service(
            name="embedder",
            # Articles stored but not embedded yet (make run stores the demo corpus and leaves its embedding to
            # this process): embedded at the lowest CPU priority and handed to the worker, so the site answers
            # from the lexical index at once and questions never queue behind embedding.
            argv=[python, str(manage_py), "embed_pending", "--follow", "--no-progress"],
            ready=log_says(EMBEDDER_READY_LINE),
            ready_timeout=120,
        )
    )
    return planned


class Stack:
    def __init__(self, var_dir: Path) -> None:
        self.run_dir = var_dir / "run"
        self.log_dir = var_dir / "log"

    def pid_file(self, name: str) -> Path:
        return self.run_dir / f"{name}.pid"

    def running_pid(self, name: str) -> int | None:
        try:
            pid = int(self.pid_file(name).read_text())
            os.kill(pid, 0)
        except (FileNotFoundError, ValueError, ProcessLookupError):
            return None
        return None if _reaped(pid) else pid

    def start(self, planned: list[Service], *, on_wait: Callable[[str], None] = lambda _: None) -> None:
        """Launch every planned process at once, then wait until each is ready: none needs another to start (the
        worker reaches the LLM server only when a question comes), so the site is up after the slowest start
        rather than after the sum of them all."""
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        for service in planned:
            if service.listens_on and port_in_use(*service.listens_on):
                host, port = service.listens_on
                raise RuntimeError(
                    f"{service.name}: {host}:{port} is already in use by another process; stop it or choose "
                    "another port (make run PORT=..., VERIMED_LLM_BASE_URL=...)"
                )
        launched = []
        for service in planned:
            log = self.log_dir / f"{service.name}.log"
            with log.open("w") as stream:
                process = subprocess.Popen(
                    service.argv,
                    stdout=stream,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,
                )
            self.pid_file(service.name).write_text(str(process.pid))
            launched.append((service, process, log, time.monotonic() + service.ready_timeout))
        for service, process, log, deadline in launched:
            on_wait(service.name)
            while not service.ready(log):
                if process.poll() is not None:
                    raise RuntimeError(f"{service.name} exited with {process.returncode}; see {log}")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{service.name} not ready after {service.ready_timeout:.0f} s; see {log}")
                time.sleep(0.5)

    def stop(self, names: list[str], *, grace_seconds: float = 15) -> list[str]:
        """Ask every named process to stop at once, then wait for them together: each gets the same grace period
        and stopping the stack takes the slowest one's time, not the sum of them all. What is still running at the
        deadline is killed."""
        signalled: dict[str, int] = {}
        for name in names:
            pid = self.running_pid(name)
            if pid is None:
                self.pid_file(name).unlink(missing_ok=True)
                continue
            os.killpg(pid, signal.SIGTERM)
            signalled[name] = pid
        deadline = time.monotonic() + grace_seconds
        while time.monotonic() < deadline and any(self.running_pid(name) for name in signalled):
            time.sleep(0.2)
        for name, pid in signalled.items():
            if self.running_pid(name):
                os.killpg(pid, signal.SIGKILL)
            self.pid_file(name).unlink(missing_ok=True)
        return list(signalled)


def _reaped(pid: int) -> bool:
    """Whether `pid` had exited and was a child of this process, now reaped. A child that exits stays a zombie until
    its parent waits for it, and `os.kill(pid, 0)` still finds a zombie: without this, a stack started and stopped
    by the same process (a failed start cleaning up after itself) would wait out the whole grace period for
    processes that are already gone."""
    try:
        waited, _status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:  # not our child: its own parent reaps it
        return False
    return waited == pid
