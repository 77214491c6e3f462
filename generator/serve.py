"""Serve a packaged GGUF model with llama-cpp-python's OpenAI-compatible server.

    python -m generator.serve --model qwen2.5-coder-1.5b-instruct --port 8081 --cache var/models

The model is joined from its wheel slices on first use; the process then becomes the server (exec), so a
supervisor that stops this pid stops the server.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from generator.model_files import MODELS, assemble


def server_argv(*, model_path: Path, alias: str, host: str, port: int, n_ctx: int, threads: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model", str(model_path),
        "--model_alias", alias,
        "--host", host,
        "--port", str(port),
        "--n_ctx", str(n_ctx),
        "--n_threads", str(threads),
        "--n_threads_batch", str(threads),
        "--n_batch", "512",
    ]  # fmt: skip


@contextmanager
def served_model(model: str, *, cache: Path, n_ctx: int = 8192, log_path: Path | None = None) -> Iterator[str]:
    """Serve `model` on a free loopback port for the duration of the block; yields its OpenAI base URL."""
    assemble(model, cache)  # here, so that a missing model fails with its own error rather than a dead server
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    log = log_path.open("w") if log_path else subprocess.DEVNULL
    process = subprocess.Popen(
        [sys.executable, "-m", "generator.serve", "--model", model, "--port", str(port), "--cache", str(cache),
         "--n-ctx", str(n_ctx)],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_until_serving(f"{base_url}/models", process, timeout=600)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
        if log_path:
            log.close()  # type: ignore[union-attr]


def _wait_until_serving(url: str, process: subprocess.Popen[bytes], *, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the model server exited with {process.returncode} before serving {url}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise TimeoutError(f"the model server did not answer at {url} within {timeout:.0f} s")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=sorted(MODELS), default="qwen2.5-coder-1.5b-instruct")
    parser.add_argument("--cache", type=Path, default=Path("var/models"))
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8081)
    parser.add_argument("--n-ctx", type=int, default=8192, help="Context window: ten abstracts need about 4k tokens.")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args(argv)
    model_path = assemble(args.model, args.cache)
    command = server_argv(
        model_path=model_path, alias=args.model, host=args.host, port=args.port, n_ctx=args.n_ctx, threads=args.threads
    )
    os.execv(command[0], command)


if __name__ == "__main__":
    main()
