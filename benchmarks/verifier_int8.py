"""Can ONNX Runtime int8 make a verifier checkpoint fast enough for the page? Side by side in one run: torch fp32 (the
product's reading) against a dynamic-int8 ONNX export of the same checkpoint, per checkpoint.

    .venv/bin/python benchmarks/verifier_int8.py --pairs 160

The pairs are SciFact dev claims against the title and abstract of the documents they cite (at most two a claim),
read at the product's 256 tokens, batched by length like `CrossEncoderVerifier.logits`. "agreement" is the share of
pairs whose int8 argmax equals torch's; "max |Δ logit|" the largest logit difference. The export is torch's
TorchScript exporter; the quantization is ONNX Runtime's `quantize_dynamic` with per-channel int8 weights on the
MatMuls that multiply by a weight (an initializer): the attention's activation-by-activation products stay fp32
(quantizing them too gave the same agreement here). The fp32 export itself matches torch to 3e-6 in logits (checked on
24 pairs), so what the int8 column loses is the quantization's, not the export's.
Exports are written under `--workdir` (not kept in the repository). Prints a table and writes JSON.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import sys
import time
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
import torch

from verifier.cross_encoder import DEFAULT_MAX_LENGTH, CrossEncoderVerifier

ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("VERIMED_DATA_DIR", ROOT.parent / "shared" / "data"))
CHECKPOINTS = {
    "minilm (shipped)": ROOT / Path("verifier/models/verimed-minilm-verifier"),
    "mpnet": ROOT / Path("verifier/models/verimed-mpnet-verifier"),
}
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def cpu_name() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def scifact_dev_pairs(limit: int) -> list[tuple[str, str]]:
    data = DATA_DIR / "scifact"
    corpus: dict[str, str] = {}
    with gzip.open(data / "corpus.jsonl.gz", "rt") as lines:
        for line in lines:
            document = json.loads(line)
            corpus[str(document["doc_id"])] = f"{document['title']} {' '.join(document['abstract'])}"
    pairs: list[tuple[str, str]] = []
    for line in (data / "claims_dev.jsonl").read_text().splitlines():
        claim = json.loads(line)
        for doc_id in claim.get("cited_doc_ids", [])[:2]:
            if str(doc_id) in corpus:
                pairs.append((claim["claim"], corpus[str(doc_id)]))
    return pairs[:limit]


def export_int8(model_dir: Path, workdir: Path) -> Path:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    raw, int8 = workdir / f"{model_dir.name}.onnx", workdir / f"{model_dir.name}_int8.onnx"
    model = AutoModelForSequenceClassification.from_pretrained(
        str(model_dir), attn_implementation="eager", dtype=torch.float32
    ).eval()
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    # Two pairs of different lengths, so the traced graph keeps the attention mask.
    example = tokenizer(
        ["a claim", "another claim"],
        ["a passage", "a longer passage with more words"],
        padding=True,
        return_tensors="pt",
    )
    names = [name for name in _INPUTS if name in example]

    class Logits(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
            logits: torch.Tensor = self.model(**dict(zip(names, inputs, strict=True))).logits
            return logits

    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            Logits().eval(),
            tuple(example[name] for name in names),
            str(raw),
            dynamo=False,
            input_names=names,
            output_names=["logits"],
            dynamic_axes={**{name: {0: "batch", 1: "sequence"} for name in names}, "logits": {0: "batch"}},
            opset_version=17,
        )
    graph = onnx.load(str(raw)).graph
    weights = {initializer.name for initializer in graph.initializer}
    weight_matmuls = [node.name for node in graph.node if node.op_type == "MatMul" and node.input[1] in weights]
    quantize_dynamic(
        str(raw),
        str(int8),
        weight_type=QuantType.QInt8,
        per_channel=True,
        op_types_to_quantize=["MatMul"],
        nodes_to_quantize=weight_matmuls,
    )
    return int8


class OnnxLogits:
    def __init__(self, path: Path, model_dir: Path, *, threads: int) -> None:
        import onnxruntime as ort
        from transformers import AutoTokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.names = [node.name for node in self.session.get_inputs()]
        self.tokenizer = AutoTokenizer.from_pretrained(str(model_dir))

    def __call__(self, pairs: list[tuple[str, str]], batch_size: int = 32) -> np.ndarray:
        order = sorted(range(len(pairs)), key=lambda index: len(pairs[index][0]) + len(pairs[index][1]))
        result = np.zeros((len(pairs), 3))
        for start in range(0, len(order), batch_size):
            batch = order[start : start + batch_size]
            encoded = self.tokenizer(
                [pairs[index][0] for index in batch],
                [pairs[index][1] for index in batch],
                truncation="longest_first",
                max_length=DEFAULT_MAX_LENGTH,
                padding=True,
                return_tensors="np",
            )
            result[batch] = self.session.run(None, {name: encoded[name].astype(np.int64) for name in self.names})[0]
        return result


def measure(label: str, model_dir: Path, pairs: list[tuple[str, str]], workdir: Path, threads: int) -> dict[str, Any]:
    started = time.perf_counter()
    int8_path = export_int8(model_dir, workdir)
    export_s = time.perf_counter() - started
    verifier = CrossEncoderVerifier.load(model_dir)
    onnx_logits = OnnxLogits(int8_path, model_dir, threads=threads)
    verifier.logits(pairs[:8]), onnx_logits(pairs[:8])  # warm both
    started = time.perf_counter()
    torch_out = verifier.logits(pairs)
    torch_s = time.perf_counter() - started
    started = time.perf_counter()
    int8_out = onnx_logits(pairs)
    int8_s = time.perf_counter() - started
    return {
        "checkpoint": label,
        "export_s": round(export_s, 1),
        "torch_fp32_pairs_per_s": round(len(pairs) / torch_s, 2),
        "onnx_int8_pairs_per_s": round(len(pairs) / int8_s, 2),
        "agreement": round(float((torch_out.argmax(1) == int8_out.argmax(1)).mean()), 3),
        "max_abs_logit_diff": round(float(np.abs(torch_out - int8_out).max()), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=160)
    parser.add_argument("--workdir", type=Path, default=Path("var/benchmarks/verifier-int8"))
    parser.add_argument("--json", type=Path, default=Path("var/benchmarks/verifier_int8.json"))
    arguments = parser.parse_args()
    threads = torch.get_num_threads()
    arguments.workdir.mkdir(parents=True, exist_ok=True)
    pairs = scifact_dev_pairs(arguments.pairs)
    rows = [measure(label, path, pairs, arguments.workdir, threads) for label, path in CHECKPOINTS.items()]
    baseline = rows[0]["torch_fp32_pairs_per_s"]
    print(f"{len(pairs)} SciFact dev pairs at {DEFAULT_MAX_LENGTH} tokens, {threads} threads, {cpu_name()}")
    print(f"{'checkpoint':<18} {'torch fp32':>11} {'onnx int8':>10} {'vs shipped':>11} {'agree':>6} {'max |Δ|':>8}")
    for row in rows:
        ratio = baseline / row["onnx_int8_pairs_per_s"]
        row["int8_time_vs_shipped_fp32"] = round(ratio, 2)
        print(
            f"{row['checkpoint']:<18} {row['torch_fp32_pairs_per_s']:>9.1f}/s {row['onnx_int8_pairs_per_s']:>8.1f}/s "
            f"{ratio:>10.2f}x {row['agreement']:>6.3f} {row['max_abs_logit_diff']:>8.3f}"
        )
    arguments.json.parent.mkdir(parents=True, exist_ok=True)
    arguments.json.write_text(
        json.dumps({"cpu": cpu_name(), "threads": threads, "pairs": len(pairs), "rows": rows}, indent=2) + "\n"
    )


if __name__ == "__main__":
    main()
