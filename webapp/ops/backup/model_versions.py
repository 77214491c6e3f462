"""The models a backup's data was made with: the embedder its vectors came from (a restore that copies the vectors
needs the same one), and the verifier, evidence tagger, reranker and LLM its answers were written and checked with."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from django.conf import settings

from generator.model_files import MODELS
from indexer.onnx_export import fingerprint
from indexer.packaged_models import resolve_model_path
from webapp.corpus import engines


def _folder_fingerprint(name: str) -> str | None:
    """A hash of every file of a model folder; None for a hub id (no files here to hash)."""
    path = Path(resolve_model_path(name))
    return fingerprint(path) if path.is_dir() else None


def embedder_version() -> dict[str, Any]:
    config = settings.VERIMED.engines
    return {
        "model": config.embedding_model,
        "model_id": engines.embedder().model_id,
        "backend": config.embedding_backend,
        "dimension": engines.embedder_dimension(),
        "fingerprint": _folder_fingerprint(config.embedding_model),
    }


def model_versions() -> dict[str, dict[str, Any]]:
    verification, llm = settings.VERIMED.verification, settings.VERIMED.llm
    packaged = MODELS.get(llm.model)
    return {
        "embedder": embedder_version(),
        "verifier": {
            "kind": verification.verifier,
            "model": verification.verifier_model,
            "fingerprint": _folder_fingerprint(verification.verifier_model),
        },
        "evidence": {
            "finder": verification.evidence_finder,
            "model": verification.evidence_model,
            "fingerprint": _folder_fingerprint(verification.evidence_model),
        },
        "reranker": {
            "model": settings.VERIMED.engines.reranker_model,
            "fingerprint": _folder_fingerprint(settings.VERIMED.engines.reranker_model),
        },
        "llm": {
            "model": llm.model,
            "server_kind": llm.server_kind,
            # The GGUF files this project joins from wheels are known by hash; a served model is known by name only.
            "sha256": packaged.sha256 if packaged else None,
        },
    }


def embedder_differences(saved: dict[str, Any]) -> list[str]:
    """How this checkout's embedder differs from the one a backup's vectors were made with."""
    current = embedder_version()
    return [
        f"{key} {saved.get(key)!r} in the backup, {current[key]!r} here"
        for key in ("model_id", "backend", "dimension", "fingerprint")
        if saved.get(key) != current[key]
    ]


def app_version() -> dict[str, Any]:
    """The checkout's git commit, and whether tracked files differ from it."""
    base = Path(settings.BASE_DIR)

    def git(*args: str) -> str | None:
        try:
            result = subprocess.run(["git", *args], cwd=base, capture_output=True, text=True, timeout=30, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return result.stdout.strip() if result.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    changes = git("status", "--porcelain", "--untracked-files=no") if commit else None
    return {"commit": commit, "modified": bool(changes) if changes is not None else None}
