"""The cross-encoder's arithmetic: fp32, or bf16 autocast where the CPU computes bf16 natively.

bf16 autocast runs the matrix products in bf16 and keeps losses, norms and soft-max in fp32. On a CPU with
AVX512-BF16 (or AMX) it trains mpnet 2.5x and reads pairs 3.8x faster than fp32 (benchmarks/verifier_training_speed.py);
without those instructions torch emulates bf16 (not measured here, and not expected to gain), so `auto` looks at the
CPU's flags.
"""

from __future__ import annotations

import contextlib
from functools import cache
from pathlib import Path

import torch

PRECISIONS = ("fp32", "bf16")
CHOICES = (*PRECISIONS, "auto")
_NATIVE_BF16_FLAGS = frozenset({"avx512_bf16", "amx_bf16"})


@cache
def cpu_has_native_bf16(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    try:
        text = cpuinfo.read_text()
    except OSError:
        return False
    for line in text.splitlines():
        if line.startswith("flags"):
            return bool(_NATIVE_BF16_FLAGS & set(line.split(":", 1)[1].split()))
    return False


def resolve_precision(choice: str) -> str:
    """fp32 or bf16 for a setting value; `auto` is bf16 exactly where the CPU computes it natively."""
    if choice == "auto":
        return "bf16" if cpu_has_native_bf16() else "fp32"
    if choice not in PRECISIONS:
        raise ValueError(f"unknown precision {choice!r} ({', '.join(CHOICES)})")
    return choice


def autocast(precision: str) -> contextlib.AbstractContextManager[object]:
    """bf16 autocast for a forward pass, or nothing for fp32."""
    if resolve_precision(precision) == "bf16":
        return torch.autocast("cpu", dtype=torch.bfloat16)
    return contextlib.nullcontext()
