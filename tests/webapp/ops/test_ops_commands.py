"""The commands `make run` relies on: admin account, demo ingestion guard, the process plan."""

from __future__ import annotations

import io
import socket
import time
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from pytest_django.fixtures import Settings

from generator.serve import parse_options
from webapp.ops.stack import Service, Stack, log_says, services

pytestmark = [pytest.mark.model, pytest.mark.django_db]


def test_ensure_admin_creates_once_and_keeps_the_generated_password(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.VAR_DIR = tmp_path
    monkeypatch.delenv("DJANGO_SUPERUSER_PASSWORD", raising=False)
    out = io.StringIO()
    call_command("ensure_admin", stdout=out)
    password = out.getvalue().strip().rsplit("password=", 1)[1]
    user = get_user_model().objects.get(username="admin")
    assert user.is_superuser
    assert user.check_password(password)
    assert f"password: {password}" in (tmp_path / "admin-credentials.txt").read_text()
    call_command("ensure_admin", stdout=io.StringIO())
    assert get_user_model().objects.count() == 1


def test_ingest_demo_fails_loudly_without_the_shared_data(settings: Settings, tmp_path: Path) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_DATA_DIR=tmp_path / "missing")
    with pytest.raises(CommandError, match="demo data not found"):
        call_command("ingest_demo")


def test_the_stack_starts_a_local_llm_server_only_for_a_local_url(tmp_path: Path) -> None:
    local = services(host="127.0.0.1", port=8000, llm_base_url="http://127.0.0.1:8081/v1", llm_model="m",
                     model_cache=tmp_path)  # fmt: skip
    remote = services(host="127.0.0.1", port=8000, llm_base_url="http://vllm:8000/v1", llm_model="m",
                      model_cache=tmp_path)  # fmt: skip
    assert [s.name for s in local] == ["llm", "worker", "web", "embedder"]
    assert [s.name for s in remote] == ["worker", "web", "embedder"]


def test_the_stack_serves_llama_cpp_with_the_configured_prompt_lookup(tmp_path: Path) -> None:
    planned = services(host="127.0.0.1", port=8000, llm_base_url="http://127.0.0.1:8081/v1",
                       llm_model="qwen2.5-coder-1.5b-instruct", model_cache=tmp_path,
                       llm_prompt_lookup_tokens=8)  # fmt: skip

    argv = next(service.argv for service in planned if service.name == "llm")
    assert argv[argv.index("--prompt-lookup-tokens") + 1] == "8"
    assert parse_options(argv[3:]).prompt_lookup_tokens == 8  # what `generator.serve` reads back


def test_the_stack_leaves_a_local_vllm_server_to_whoever_runs_it(tmp_path: Path) -> None:
    planned = services(host="127.0.0.1", port=8000, llm_base_url="http://127.0.0.1:8001/v1", llm_model="m",
                       model_cache=tmp_path, llm_server_kind="vllm")  # fmt: skip

    assert [s.name for s in planned] == ["worker", "web", "embedder"]


def test_the_stack_launches_every_process_before_waiting_for_any(tmp_path: Path) -> None:
    """The first service is ready only once the second has written its log: started one after another, the first
    would wait out its timeout for a process not yet launched."""
    second_log = tmp_path / "log" / "second.log"
    planned = [
        Service(name="first", argv=["sleep", "30"], ready=lambda _log: "second up" in _read(second_log),
                ready_timeout=5),
        Service(name="second", argv=["sh", "-c", "echo second up; sleep 30"], ready=log_says("second up"),
                ready_timeout=5),
    ]  # fmt: skip
    stack = Stack(tmp_path)
    try:
        stack.start(planned)
        assert stack.running_pid("first")
        assert stack.running_pid("second")
    finally:
        stack.stop(["first", "second"])


def test_a_process_that_exited_is_not_running_even_while_it_is_an_unreaped_child(tmp_path: Path) -> None:
    """A child of this process that exits is a zombie until reaped, and a zombie still answers kill(pid, 0)."""
    stack = Stack(tmp_path)
    # It outlives start(), so the Popen object is gone before it exits and nothing reaps it meanwhile.
    brief = Service(name="brief", argv=["sh", "-c", "echo up; sleep 0.5"], ready=log_says("up"), ready_timeout=5)
    stack.start([brief])
    pid = int(stack.pid_file("brief").read_text())
    deadline = time.monotonic() + 10
    while Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
        assert time.monotonic() < deadline, "the process should have exited"
        time.sleep(0.05)
    assert stack.running_pid("brief") is None


def test_stop_signals_every_process_before_waiting_for_any(tmp_path: Path) -> None:
    """Each process takes a second to stop after SIGTERM and notes when it was signalled and when it left: stopped
    one after another, the second would be signalled only after the first had left."""
    events = tmp_path / "events"
    slow_to_stop = (
        'trap "echo $0 term >> {0}; sleep 1; echo $0 left >> {0}; exit 0" TERM; echo up; while :; do sleep 0.1; done'
    )
    planned = [
        Service(name=name, argv=["sh", "-c", slow_to_stop.format(events), name], ready=log_says("up"), ready_timeout=5)
        for name in ("first", "second")
    ]
    stack = Stack(tmp_path)
    stack.start(planned)
    assert stack.stop(["first", "second"], grace_seconds=30) == ["first", "second"]
    lines = events.read_text().splitlines()
    assert sorted(lines) == ["first left", "first term", "second left", "second term"]
    assert lines.index("second term") < lines.index("first left")
    assert stack.running_pid("first") is None
    assert stack.running_pid("second") is None


def _read(path: Path) -> str:
    return path.read_text() if path.exists() else ""


def test_ingest_refuses_a_missing_path() -> None:
    with pytest.raises(CommandError, match="does-not-exist"):
        call_command("ingest", "/does-not-exist.xml")


def test_the_stack_refuses_to_start_on_a_port_another_process_holds(tmp_path: Path) -> None:
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        web = [s for s in services(host="127.0.0.1", port=port, llm_base_url="http://vllm:8000/v1", llm_model="m",
                                   model_cache=tmp_path) if s.name == "web"]  # fmt: skip
        with pytest.raises(RuntimeError, match=f"127.0.0.1:{port} is already in use"):
            Stack(tmp_path).start(web)
    assert not (tmp_path / "run" / "web.pid").exists()
