"""ONNX Runtime backend of the embedder: a one-time export into a cache folder, and the runtime that reads it.

optimum (which sentence-transformers' own `backend="onnx"` needs) pins transformers below 5, so the export is done
with torch's TorchScript exporter, fused with ONNX Runtime's transformer optimizer and quantized with its
`quantize_dynamic`. The exported graph ends with the model's pooling and L2 normalisation, so serving needs only
onnxruntime and the `tokenizers` library: torch is imported for the export alone.

Layout of the cache (`cache_dir/embedders/<label>-<fingerprint>/`): a copy of the sentence-transformers folder, plus
`onnx/model.onnx` (fp32, fused) and `onnx/model_int8.onnx` (dynamic int8). The fingerprint hashes the source folder's
files, so a changed model is exported anew instead of serving stale weights.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from indexer.base import Vectors

OnnxPrecision = Literal["fp32", "int8"]

# Bump when the exported graph changes (inputs, pooling, fusion, quantization), so old caches are not reused.
EXPORT_VERSION = "1"
FP32_FILE = "onnx/model.onnx"
INT8_FILE = "onnx/model_int8.onnx"
_FILES: dict[OnnxPrecision, str] = {"fp32": FP32_FILE, "int8": INT8_FILE}
_DONE = "export.json"  # written last: a folder without it is an interrupted export
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
# Architectures whose attention pattern ONNX Runtime's optimizer knows how to fuse; others run unfused.
_FUSABLE = {"bert": "bert", "roberta": "bert", "xlm-roberta": "bert"}


def exported_model_dir(model_path: Path, cache_dir: Path, *, label: str) -> Path:
    """The cache folder holding `model_path`'s ONNX export, exporting it on first use."""
    if not model_path.is_dir():
        raise ValueError(f"the ONNX backends export from a local model folder; {model_path} is not one")
    target = cache_dir / "embedders" / f"{slug(label)}-{fingerprint(model_path)}"
    if (target / _DONE).exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    # Exported beside the target and renamed into place, so that two workers warming up at once never see (or
    # serve) a half-written folder; the loser of the race discards its copy.
    staging = Path(tempfile.mkdtemp(prefix=".export-", dir=target.parent))
    try:
        export_onnx(model_path, staging)
        staging.chmod(0o755)  # mkdtemp's 0700 would hide the export from a worker running as another user
        try:
            staging.rename(target)
        except OSError:
            if not (target / _DONE).exists():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def fingerprint(model_path: Path) -> str:
    """A short hash of every file in the model folder (names and bytes) and of the export recipe."""
    digest = hashlib.sha256(f"export-v{EXPORT_VERSION}".encode())
    for path in sorted(p for p in model_path.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(model_path)).encode())
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]


def export_onnx(model_path: Path, out: Path) -> None:
    """Copies the model folder into `out` and writes the fp32 and int8 ONNX graphs into the copy."""
    shutil.copytree(model_path, out, dirs_exist_ok=True)
    (out / "onnx").mkdir(exist_ok=True)
    raw = out / "onnx" / "model.raw.onnx"
    _trace_to_onnx(out, raw)
    fuse_graph(raw, out / FP32_FILE, out)
    raw.unlink()
    quantize_graph(out / FP32_FILE, out / INT8_FILE)
    (out / _DONE).write_text(json.dumps({"export_version": EXPORT_VERSION, "source": str(model_path)}) + "\n")


def _trace_to_onnx(model_dir: Path, out: Path) -> None:
    import torch
    from transformers import AutoModel, AutoTokenizer

    # Eager attention traces to the MatMul/Softmax pattern ONNX Runtime fuses into its Attention kernel; SDPA
    # traces to a form it does not recognise, which measured slower.
    model = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager").eval()
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    wrapped = _pooled_encoder(model, _pooling_mode(model_dir)).eval()
    # Texts of different lengths, so the example batch is padded: with an all-ones mask transformers may drop the
    # mask, and the tracer would freeze that branch into a graph that then ignores padding.
    example = tokenizer(
        ["a short text", "a somewhat longer example text with more tokens"], padding=True, return_tensors="pt"
    )
    names = [name for name in _INPUTS if name in example]
    axes = {name: {0: "batch", 1: "sequence"} for name in names}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # tracer and exporter deprecation notes, noise for a one-time export
        torch.onnx.export(
            wrapped,
            tuple(example[name] for name in names),
            str(out),
            dynamo=False,  # the dynamo exporter needs onnxscript too; the TorchScript one is enough for BERT
            input_names=names,
            output_names=["sentence_embedding"],
            dynamic_axes={**axes, "sentence_embedding": {0: "batch"}},
            opset_version=17,
        )


def _pooling_mode(model_dir: Path) -> str:
    config_path = model_dir / "1_Pooling" / "config.json"
    config = json.loads(config_path.read_text()) if config_path.exists() else {"pooling_mode_mean_tokens": True}
    if config.get("pooling_mode_mean_tokens"):
        return "mean"
    if config.get("pooling_mode_cls_token"):
        return "cls"
    raise ValueError(f"the ONNX backend supports mean or CLS pooling, not {config}")


def _pooled_encoder(model: Any, pooling: str) -> Any:
    # The class derives from torch.nn.Module, so it is defined on first use: importing this module stays torch-free.
    import torch

    class PooledEncoder(torch.nn.Module):
        """The transformer, its sentence-transformers pooling and L2 normalisation as one traceable module."""

        def __init__(self, model: torch.nn.Module, pooling: str) -> None:
            super().__init__()
            self.model = model
            self.pooling = pooling

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, *rest: torch.Tensor) -> torch.Tensor:
            extra = {"token_type_ids": rest[0]} if rest else {}
            hidden = self.model(input_ids=input_ids, attention_mask=attention_mask, **extra).last_hidden_state
            if self.pooling == "cls":
                pooled = hidden[:, 0]
            else:
                mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    return PooledEncoder(model, pooling)


def fuse_graph(raw: Path, out: Path, model_dir: Path) -> None:
    config = json.loads((model_dir / "config.json").read_text())
    model_type = _FUSABLE.get(config.get("model_type", ""))
    if model_type is None:
        shutil.copyfile(raw, out)
        return
    from onnxruntime.transformers import optimizer

    fused = optimizer.optimize_model(
        str(raw),
        model_type=model_type,
        num_heads=int(config["num_attention_heads"]),
        hidden_size=int(config["hidden_size"]),
        opt_level=1,
    )
    fused.save_model_to_file(str(out))


def quantize_graph(fp32: Path, out: Path) -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # Per-channel weights keep MiniLM's cosine to fp32 at ~0.995 (per-tensor: ~0.94). MatMul only: the fused
    # Attention kernel stays fp32, which measured as fast and a little closer to fp32 than quantizing it too.
    quantize_dynamic(
        str(fp32),
        str(out),
        weight_type=QuantType.QInt8,
        per_channel=True,
        op_types_to_quantize=["MatMul"],
        # the fused contrib ops defeat ONNX shape inference; their outputs are float
        extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
    )


def _max_seq_length(model_dir: Path) -> int:
    st_config = model_dir / "sentence_bert_config.json"
    if st_config.exists():
        return int(json.loads(st_config.read_text())["max_seq_length"])
    return int(json.loads((model_dir / "config.json").read_text())["max_position_embeddings"])


def slug(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "--", label).strip("-") or "model"


class OnnxSentenceEncoder:
    """Embeds with an exported graph: tokenizes once, sorts by token length and pads each batch to its longest."""

    def __init__(self, model_dir: Path, precision: OnnxPrecision, *, threads: int | None = None) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.max_tokens = _max_seq_length(model_dir)
        # Two tokenizers, because truncation is state on the object: one cuts to the window as sentence-transformers
        # does (the closing special token kept), the other counts whole texts for the chunker.
        self._tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(max_length=self.max_tokens)
        self._counter = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._counter.no_padding()
        self._counter.no_truncation()
        self._pad_id = self._tokenizer.token_to_id("[PAD]") or 0
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or 0  # 0: one thread per physical core, ONNX Runtime's default
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # warnings about the fused graph's shape inference are not actionable
        self._session = ort.InferenceSession(
            str(model_dir / _FILES[precision]), options, providers=["CPUExecutionProvider"]
        )
        self._inputs = [node.name for node in self._session.get_inputs()]
        self.dimension = int(self.encode(["dimension probe"], 1).shape[1])

    def token_lengths(self, texts: Sequence[str]) -> list[int]:
        return [len(encoding.ids) for encoding in self._counter.encode_batch(list(texts))]

    def encode(self, texts: Sequence[str], batch_size: int) -> Vectors:
        ids = [encoding.ids for encoding in self._tokenizer.encode_batch(list(texts))]
        # Longest first, like sentence-transformers' encode: similar lengths share a batch, so little is padding.
        order = np.argsort([-len(row) for row in ids], kind="stable")
        chunks = [order[start : start + batch_size] for start in range(0, len(ids), batch_size)]
        outputs = [self._session.run(None, self._feeds(ids, rows))[0] for rows in chunks]
        vectors = np.empty((len(ids), outputs[0].shape[1] if outputs else 0), dtype=np.float32)
        for rows, output in zip(chunks, outputs, strict=True):
            vectors[rows] = output
        return vectors

    def _feeds(self, ids: list[list[int]], rows: np.ndarray) -> dict[str, np.ndarray]:
        width = max(len(ids[row]) for row in rows)
        input_ids = np.full((len(rows), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for i, row in enumerate(rows):
            input_ids[i, : len(ids[row])] = ids[row]
            mask[i, : len(ids[row])] = 1
        available = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)}
        return {name: available[name] for name in self._inputs}
