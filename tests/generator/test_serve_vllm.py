"""How `generator.serve_vllm` launches vLLM's CPU build (the server itself runs in `make vllm-check`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.serve_vllm import default_dtype, server_argv


@pytest.mark.parametrize(
    ("flags", "dtype"),
    [
        ("fpu sse avx avx2 fma", "float32"),
        ("avx2 avx512f avx512bw avx512_vnni", "float32"),
        ("avx2 avx512f avx512_bf16 avx512_vnni", "bfloat16"),
        ("avx2 amx_bf16 amx_tile", "bfloat16"),
    ],
)
def test_bfloat16_only_where_the_cpu_computes_in_it(flags: str, dtype: str) -> None:
    assert default_dtype(f"processor\t: 0\nflags\t\t: {flags}\n") == dtype


def test_the_server_serves_the_weights_under_the_models_name_in_eager_mode() -> None:
    argv = server_argv(
        vllm_python=Path("/venv/bin/python"), weights=Path("/cache/w"), alias="qwen", host="127.0.0.1", port=8001,
        max_model_len=8192, dtype="float32",
    )  # fmt: skip

    assert argv[:3] == ["/venv/bin/python", "-m", "vllm.entrypoints.openai.api_server"]
    options = dict(zip(argv[3::2], argv[4::2], strict=False))
    assert options["--model"] == "/cache/w"
    assert options["--served-model-name"] == "qwen"
    assert options["--dtype"] == "float32"
    assert options["--max-model-len"] == "8192"
    assert "--enforce-eager" in argv
