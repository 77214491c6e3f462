"""Which arithmetic the cross-encoder runs in: `auto` follows the CPU's bf16 flags; unknown choices are refused."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from verifier.precision import autocast, cpu_has_native_bf16, resolve_precision


def cpuinfo(tmp_path: Path, flags: str) -> Path:
    path = tmp_path / "cpuinfo"
    path.write_text(f"processor\t: 0\nmodel name\t: Some CPU\nflags\t\t: fpu sse2 {flags}\n")
    return path


def test_native_bf16_is_read_from_the_cpu_flags(tmp_path: Path) -> None:
    for name, flags, native in [
        ("zen4", "avx2 avx512f avx512_bf16", True),
        ("avx512-only", "avx2 avx512f avx512_vnni", False),
        ("sapphire-rapids", "avx2 amx_bf16 amx_tile", True),
        ("avx2-only", "avx2 fma", False),
    ]:
        (tmp_path / name).mkdir()
        assert cpu_has_native_bf16(cpuinfo(tmp_path / name, flags)) is native, name
    assert not cpu_has_native_bf16(tmp_path / "missing")


def test_auto_is_bf16_exactly_where_the_cpu_has_it_and_unknown_choices_are_refused() -> None:
    assert resolve_precision("auto") == ("bf16" if cpu_has_native_bf16() else "fp32")
    assert resolve_precision("fp32") == "fp32"
    assert resolve_precision("bf16") == "bf16"
    with pytest.raises(ValueError, match="unknown precision 'fp16'"):
        resolve_precision("fp16")


def test_bf16_autocast_runs_matrix_products_in_bf16_and_fp32_leaves_them_alone() -> None:
    a, b = torch.randn(4, 8), torch.randn(8, 2)
    with autocast("bf16"):
        assert (a @ b).dtype == torch.bfloat16
    with autocast("fp32"):
        assert (a @ b).dtype == torch.float32
