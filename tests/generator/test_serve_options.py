"""Tests for the llama.cpp server's tuning options: what `generator.serve` passes on, and what it round-trips."""

from __future__ import annotations

import argparse
import socket
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from generator.serve import ServerTuning, parse_options, served_model, server_argv, tuning_from_args
from tests.support import TEST_LLM_MODEL


def argv_for(tuning: ServerTuning) -> list[str]:
    return server_argv(model_path=Path("model.gguf"), alias="m", host="127.0.0.1", port=8081, n_ctx=4096, tuning=tuning)


def option(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


@pytest.mark.parametrize(
    "tuning",
    [
        ServerTuning(),
        ServerTuning(threads=3, batch=128, flash_attention=True, prompt_cache_mb=256, prompt_logits=True),
        ServerTuning(threads=1, batch=2048, flash_attention=False, prompt_cache_mb=0),
        ServerTuning(prompt_lookup_tokens=10),
    ],
)
def test_a_tuning_survives_the_serve_command_line(tuning: ServerTuning) -> None:
    """served_model hands the tuning to a `generator.serve` child as options: it must read back the same."""
    assert tuning_from_args(parse_options(tuning.argv())) == tuning


def test_batch_threads_and_flash_attention_reach_llama_cpp() -> None:
    argv = argv_for(ServerTuning(threads=3, batch=128, flash_attention=True))

    assert option(argv, "--n_threads") == option(argv, "--n_threads_batch") == "3"
    assert option(argv, "--n_batch") == option(argv, "--n_ubatch") == "128"
    assert option(argv, "--flash_attn") == "True"
    assert option(argv, "--n_ctx") == "4096"


def test_the_prompt_cache_is_passed_only_when_it_has_room() -> None:
    assert "--cache" not in argv_for(ServerTuning(prompt_cache_mb=0))

    argv = argv_for(ServerTuning(prompt_cache_mb=64))
    assert option(argv, "--cache") == "True"
    assert option(argv, "--cache_type") == "ram"
    assert option(argv, "--cache_size") == str(64 * 2**20)


def test_the_server_is_llama_cpps_with_a_prompt_cache_that_counts_its_memory() -> None:
    assert argv_for(ServerTuning())[1:3] == ["-m", "generator.llama_server"]


def test_a_waiting_request_never_interrupts_a_running_one() -> None:
    assert option(argv_for(ServerTuning()), "--interrupt_requests") == "False"


def test_the_server_keeps_no_logits_for_the_prompts_tokens_unless_asked() -> None:
    """llama-cpp-python's server keeps every prompt token's logits unless told not to: the 0.5B read a third slower
    on one thread, and each prompt-cache state held hundreds of MB of them."""
    assert option(argv_for(ServerTuning()), "--logits_all") == "False"
    assert option(argv_for(ServerTuning(prompt_logits=True)), "--logits_all") == "True"


def llama_cpp_settings(argv: list[str]) -> Any:
    """The ModelSettings llama-cpp-python's server builds from the options `generator.serve` hands it."""
    from llama_cpp.server.cli import add_args_from_model, parse_model_from_args
    from llama_cpp.server.settings import ModelSettings, Settings

    parser = argparse.ArgumentParser()
    add_args_from_model(parser, Settings)
    return parse_model_from_args(ModelSettings, parser.parse_args(argv[3:]))  # after `python -m module`


def test_prompt_lookup_is_off_unless_asked() -> None:
    settings = llama_cpp_settings(argv_for(ServerTuning()))

    assert settings.draft_model is None
    assert settings.logits_all is False


def test_prompt_lookup_tokens_reach_the_server_as_its_prompt_lookup_draft_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from llama_cpp.llama_speculative import LlamaPromptLookupDecoding
    from llama_cpp.server.model import LlamaProxy

    tuning = tuning_from_args(parse_options(["--prompt-lookup-tokens", "7"]))
    settings = llama_cpp_settings(argv_for(tuning))
    assert (settings.draft_model, settings.draft_model_num_pred_tokens) == ("prompt-lookup-decoding", 7)
    # llama-cpp-python keeps every token's logits with a draft model but sizes their table by this option.
    assert settings.logits_all is True

    built: dict[str, Any] = {}

    class Recorded:
        def __init__(self, **options: Any) -> None:
            built.update(options)

        def set_cache(self, cache: object) -> None:
            pass

    monkeypatch.setattr("llama_cpp.Llama", Recorded)
    LlamaProxy.load_llama_from_model_settings(settings)
    assert isinstance(built["draft_model"], LlamaPromptLookupDecoding)
    assert built["draft_model"].num_pred_tokens == 7
    assert built["logits_all"] is True


def test_a_negative_prompt_lookup_is_refused() -> None:
    with pytest.raises(SystemExit):
        parse_options(["--prompt-lookup-tokens", "-1"])


@pytest.mark.model
def test_the_server_listens_where_its_options_say_whatever_host_and_port_the_environment_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`make run PORT=8001` puts PORT in the environment of everything the stack starts, and llama-cpp-python's server
    reads $HOST and $PORT before its own options: it tried the site's port and the stack did not start. Here the
    environment names a port that is taken and an address this machine does not have."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        monkeypatch.setenv("PORT", str(taken.getsockname()[1]))
        monkeypatch.setenv("HOST", "192.0.2.1")  # TEST-NET-1: never a local address
        serving = served_model(
            TEST_LLM_MODEL, cache=settings.VERIMED.paths.model_cache, n_ctx=512, tuning=ServerTuning(threads=1)
        )
        with serving as base_url, urllib.request.urlopen(f"{base_url}/models", timeout=10) as response:
            assert response.status == 200
