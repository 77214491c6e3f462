"""What one verifier training step and one inference batch cost, per backbone and precision, side by side in one run.

    .venv/bin/python benchmarks/verifier_training_speed.py --steps 3

A step is the product's own (verifier.training's autocast, AdamW, clipping) on batch 16 of random token ids at
`--length` tokens: the cost depends on the shape only. "frozen-6" keeps the embeddings and the lower six layers
out of the backward pass (requires_grad off). bf16 is autocast on CPUs with AVX512-BF16; the quality side of that
choice is measured by a short training run, not here. Prints a table and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch
from transformers import AutoModelForSequenceClassification

from indexer.packaged_models import PACKAGED, resolve_model_path
from indexer.training_resume import optimizer_and_schedule
from verifier.precision import PRECISIONS, autocast


def freeze_lower_layers(model: torch.nn.Module, layers: int) -> None:
    """Embeddings and the first `layers` encoder layers stop learning (BERT and MPNet name them alike)."""
    for name, parameter in model.named_parameters():
        if ".embeddings." in name or any(f".encoder.layer.{index}." in name for index in range(layers)):
            parameter.requires_grad = False


def cpu_name() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def time_training(backbone: str, precision: str, frozen: int, length: int, batch: int, steps: int) -> float:
    torch.manual_seed(0)
    model = AutoModelForSequenceClassification.from_pretrained(resolve_model_path(backbone), num_labels=3)
    if frozen:
        freeze_lower_layers(model, frozen)
    model.train()
    optimizer, schedule = optimizer_and_schedule(
        model, learning_rate=2e-5, weight_decay=0.01, warmup_ratio=0.0, total_steps=steps + 1
    )
    ids = torch.randint(1000, 20000, (batch, length))
    mask = torch.ones_like(ids)
    labels = torch.randint(0, 3, (batch,))
    timings = []
    for step in range(steps + 1):  # the first step warms the allocator and kernels
        started = time.perf_counter()
        with autocast(precision):
            logits = model(input_ids=ids, attention_mask=mask).logits
        loss = torch.nn.functional.cross_entropy(logits.float(), labels)
        torch.autograd.backward(loss)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        if step:
            timings.append(time.perf_counter() - started)
    return sum(timings) / len(timings)


def time_inference(backbone: str, precision: str, length: int, batch: int, batches: int) -> float:
    model = AutoModelForSequenceClassification.from_pretrained(resolve_model_path(backbone), num_labels=3)
    model.eval()
    ids = torch.randint(1000, 20000, (batch, length))
    with torch.inference_mode(), autocast(precision):
        model(input_ids=ids)
        started = time.perf_counter()
        for _ in range(batches):
            model(input_ids=ids)
    return batch * batches / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", type=Path, default=Path("var/benchmarks/verifier_training_speed.json"))
    options = parser.parse_args()
    torch.set_num_threads(options.threads)
    rows = []
    for backbone in PACKAGED:
        for precision in PRECISIONS:
            for frozen in (0, 6):
                seconds = time_training(backbone, precision, frozen, options.length, options.batch, options.steps)
                rows.append({"backbone": backbone, "precision": precision, "frozen_layers": frozen, "step_s": seconds})
                print(f"{backbone:7} {precision:5} frozen-{frozen}: {seconds:6.2f} s a training step", flush=True)
            pairs_per_s = time_inference(backbone, precision, options.length, 32, 3)
            rows.append({"backbone": backbone, "precision": precision, "inference_pairs_per_s": pairs_per_s})
            print(f"{backbone:7} {precision:5} inference: {pairs_per_s:6.1f} pairs/s", flush=True)
    epoch_examples = 16_000
    print(f"\n{'backbone':8} {'precision':9} {'frozen':6} {'s/step':>7} {'h/16k epoch':>11}")
    for row in rows:
        if "step_s" in row:
            hours = row["step_s"] * epoch_examples / options.batch / 3600
            print(
                f"{row['backbone']:8} {row['precision']:9} {row['frozen_layers']:6} {row['step_s']:7.2f} {hours:11.2f}"
            )
    result = {
        "machine": {"cpu": cpu_name(), "threads": options.threads, "torch": torch.__version__},
        "length": options.length,
        "batch": options.batch,
        "rows": rows,
    }
    options.json.parent.mkdir(parents=True, exist_ok=True)
    options.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
