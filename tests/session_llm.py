"""One llama.cpp server for the whole test session, shared by every pytest-xdist worker.

The first worker that needs the server starts it, under a file lock, and leaves it running; the process that began
the session (pytest-xdist's controller, or pytest itself without workers) stops it when the session ends. A server
per worker would run two models on two cores, each slowing the other; keeping all model work on one worker left the
other core idle for half the suite. The server takes requests one at a time (generator.serve keeps a waiting request
from cutting a running stream short), so tests on different workers take turns with it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import tempfile
import time
from pathlib import Path

import pytest
from django.conf import settings

from generator.serve import ServerTuning, start_model_server
from tests.support import TEST_LLM_MODEL

# The folder the session's processes meet in: made by the controller, inherited by the workers it spawns.
SESSION_DIR_VARIABLE = "VERIMED_TEST_SESSION_DIR"
_OWNED_DIR = pytest.StashKey[Path]()


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):  # a pytest-xdist worker: the controller made the folder
        return
    directory = Path(tempfile.mkdtemp(prefix="verimed-test-session-"))
    os.environ[SESSION_DIR_VARIABLE] = str(directory)  # set before pytest-xdist spawns its workers
    config.stash[_OWNED_DIR] = directory


def pytest_unconfigure(config: pytest.Config) -> None:
    directory = config.stash.get(_OWNED_DIR, None)
    if directory is None:
        return
    record = directory / "llm.json"
    if record.exists():
        _stop(int(json.loads(record.read_text())["pid"]))
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="session")
def llm_base_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """llama.cpp's OpenAI-compatible server with the packaged Qwen model: one for the whole session, shared by the
    workers and the e2e stacks."""
    log_path = tmp_path_factory.mktemp("llm") / "llm.log"
    return shared_llm_url(TEST_LLM_MODEL, cache=settings.VERIMED.paths.model_cache, n_ctx=8192, log_path=log_path)


# How the session's server runs beside the test workers and the e2e stacks, which keep both cores busy:
# - one thread: llama.cpp's threads wait for each other at every step, so with two threads on two cores one busy
#   process beside it cut the writing rate from 10.4 to 0.3 tokens/s and the reading rate 2.2-fold, where one thread
#   read and wrote as fast beside it as alone (5.7-6.0 tokens/s written; benchmarks/HISTORY.md, "Beside other work");
# - a prompt cache: requests from different tests interleave, so llama.cpp's reuse of the previous prompt's prefix
#   rarely applies, while most answer prompts share their system prompt and worked example, and the stacks ask the
#   same question more than once (with it and two abstracts in the stacks' prompts, a suite run on the AMD EPYC read
#   5,005 prompt tokens, against 11,799 before);
# - batch 128: each state the cache saves keeps the logits of one batch (77 MB at 128, 311 MB at 512), and one
#   thread reads no slower in batches of 128.
SESSION_TUNING = ServerTuning(threads=1, batch=128, prompt_cache_mb=1536)


def shared_llm_url(model: str, *, cache: Path, n_ctx: int, log_path: Path) -> str:
    """The session's server's OpenAI base URL, starting it if no process of the session has yet."""
    directory = Path(os.environ[SESSION_DIR_VARIABLE])
    with (directory / "llm.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one worker starts it while the other waits, then reads its record
        record = directory / "llm.json"
        if record.exists():
            return str(json.loads(record.read_text())["url"])
        try:
            process, url = start_model_server(model, cache=cache, n_ctx=n_ctx, log_path=log_path, tuning=SESSION_TUNING)
        except (RuntimeError, TimeoutError) as exc:
            raise RuntimeError(f"LLM server did not start: {exc}\n{log_path.read_text()[-3000:]}") from None
        record.write_text(json.dumps({"url": url, "pid": process.pid}))
        return url


def _stop(pid: int, *, grace_seconds: float = 30) -> None:
    """Stop the server; it is no child of this process (a worker started it), so wait by looking, not by waitpid."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace_seconds
    while time.monotonic() < deadline:
        if not _running(pid):
            return
        time.sleep(0.2)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"  # a zombie has stopped; whoever adopted it reaps it
