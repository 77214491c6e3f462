"""Turn a packaged GGUF model into ordinary Hugging Face weights, for servers that cannot read GGUF (vLLM's CPU build).

    <vllm venv>/bin/python generator/dequantise.py --gguf var/models/qwen2.5-coder-1.5b-instruct.gguf --out DIR

Run by path with the Python of the environment that serves the weights: it needs only transformers, torch and the
`gguf` package there, and nothing of this project. transformers reads the GGUF's tensors, dequantises them to the
dtype asked for and rebuilds the tokenizer (with its chat template) from the file's metadata. The folder is written
under a temporary name and renamed when complete, so a killed run never leaves weights a server would load.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

COMPLETE_MARKER = "dequantised-from.txt"


def is_complete(out: Path, gguf: Path) -> bool:
    """Whether `out` holds a finished conversion of this very file (name and size), so it can be reused."""
    marker = out / COMPLETE_MARKER
    return marker.exists() and marker.read_text() == _identity(gguf)


def _identity(gguf: Path) -> str:
    return f"{gguf.name} {gguf.stat().st_size}\n"


def dequantise(gguf: Path, out: Path, *, dtype: str) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    partial = out.with_name(out.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(
        str(gguf.parent), gguf_file=gguf.name, dtype=getattr(torch, dtype), low_cpu_mem_usage=True
    )
    # transformers has already dequantised every tensor while loading, but still marks the model as GGUF-quantised
    # and refuses to save it; the weights are plain tensors of `dtype`, so the marks are dropped.
    model.hf_quantizer = None  # type: ignore[assignment]
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(str(partial))
    tokenizer.save_pretrained(str(partial))
    (partial / COMPLETE_MARKER).write_text(_identity(gguf))
    shutil.rmtree(out, ignore_errors=True)
    partial.rename(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gguf", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16", "float32"])
    args = parser.parse_args()
    if is_complete(args.out, args.gguf):
        print(f"already dequantised: {args.out}")
        return
    dequantise(args.gguf, args.out, dtype=args.dtype)
    print(f"dequantised {args.gguf} -> {args.out}")


if __name__ == "__main__":
    main()
