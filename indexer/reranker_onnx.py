"""ONNX Runtime backend of the reranker: a one-time int8 export of the checkpoint into a cache folder, and the scorer
that reads it with only onnxruntime and `tokenizers` (no torch in the serving process).

The export mirrors the embedder's (`indexer.onnx_export`): TorchScript trace, ONNX Runtime's BERT fusion, dynamic
int8 MatMul weights; the folder is named by a hash of the checkpoint's files, so retrained weights export anew.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from indexer.onnx_export import fingerprint, fuse_graph, quantize_graph, slug

INT8_FILE = "onnx/reranker_int8.onnx"
_DONE = "export.json"  # written last: a folder without it is an interrupted export
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def exported_reranker_dir(model_path: Path, cache_dir: Path) -> Path:
    """The cache folder holding `model_path`'s int8 export, exporting it on first use."""
    target = cache_dir / "rerankers" / f"{slug(model_path.name)}-{fingerprint(model_path)}"
    if (target / _DONE).exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    # Exported beside the target and renamed into place, so two workers warming up at once never read half a folder.
    staging = Path(tempfile.mkdtemp(prefix=".export-", dir=target.parent))
    try:
        shutil.copytree(model_path, staging, dirs_exist_ok=True)
        (staging / "onnx").mkdir(exist_ok=True)
        raw, fused = staging / "onnx" / "raw.onnx", staging / "onnx" / "fused.onnx"
        _trace(staging, raw)
        fuse_graph(raw, fused, staging)
        quantize_graph(fused, staging / INT8_FILE)
        raw.unlink()
        fused.unlink()
        (staging / _DONE).write_text(json.dumps({"source": str(model_path)}) + "\n")
        staging.chmod(0o755)
        try:
            staging.rename(target)
        except OSError:
            if not (target / _DONE).exists():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _trace(model_dir: Path, out: Path) -> None:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model = AutoModelForSequenceClassification.from_pretrained(
        str(model_dir), attn_implementation="eager", dtype=torch.float32
    ).eval()
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    # Pairs of different lengths, so the example batch is padded and the traced graph keeps the attention mask.
    example = tokenizer(
        ["a question", "another question"],
        ["a short passage", "a somewhat longer passage with more tokens"],
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
            return logits[:, 0]

    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # tracer and exporter deprecation notes, noise for a one-time export
        torch.onnx.export(
            Logits().eval(),
            tuple(example[name] for name in names),
            str(out),
            dynamo=False,
            input_names=names,
            output_names=["score"],
            dynamic_axes={**{name: {0: "batch", 1: "sequence"} for name in names}, "score": {0: "batch"}},
            opset_version=17,
        )


class OnnxScorer:
    def __init__(self, model_dir: Path, *, threads: int | None, max_length: int) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._tokenizer.no_padding()
        # Like the torch scorer's `truncation="only_second"`: the question is kept whole, the passage cut.
        self._tokenizer.enable_truncation(max_length=max_length, strategy="only_second")
        self._pad_id = self._tokenizer.token_to_id("[PAD]") or 0
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or 0
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self._session = ort.InferenceSession(str(model_dir / INT8_FILE), options, providers=["CPUExecutionProvider"])
        self._inputs = [node.name for node in self._session.get_inputs()]

    def __call__(self, queries: Sequence[str], passages: Sequence[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(list(zip(queries, passages, strict=True)))
        width = max(len(encoding.ids) for encoding in encodings)
        feeds = {name: np.zeros((len(encodings), width), dtype=np.int64) for name in _INPUTS}
        feeds["input_ids"][:] = self._pad_id
        for row, encoding in enumerate(encodings):
            length = len(encoding.ids)
            feeds["input_ids"][row, :length] = encoding.ids
            feeds["attention_mask"][row, :length] = 1
            feeds["token_type_ids"][row, :length] = encoding.type_ids
        output = self._session.run(None, {name: feeds[name] for name in self._inputs})[0]
        return np.asarray(output, dtype=np.float32).reshape(-1)
