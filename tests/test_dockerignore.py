"""The production image's build context (.dockerignore): everything the Dockerfile copies and every checkpoint the
settings load by default goes in; local state, development files and checkpoints no default serves stay out."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support import REPO
from verifier.checkpoint_overlay import Overlay
from webapp.config_groups import EnginesConfig
from webapp.qa.verification_settings import VerificationSettings

MODEL_FOLDERS = ("verifier/models", "indexer/models")


def _patterns() -> list[str]:
    lines = (REPO / ".dockerignore").read_text().splitlines()
    return [line.strip().strip("/") for line in lines if line.strip() and not line.lstrip().startswith("#")]


def _regex(pattern: str) -> re.Pattern[str]:
    """Docker's pattern syntax (Go's filepath.Match, plus `**` for any number of folders) as a regular expression."""
    out, index = [], 0
    while index < len(pattern):
        if pattern.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif pattern.startswith("**", index):
            out.append(".*")
            index += 2
        elif pattern[index] == "*":
            out.append("[^/]*")
            index += 1
        elif pattern[index] == "?":
            out.append("[^/]")
            index += 1
        else:
            out.append(re.escape(pattern[index]))
            index += 1
    return re.compile("".join(out))


def _matches(pattern: str, path: str) -> bool:
    """A pattern leaves out the path it matches and everything below a folder it matches."""
    parts = path.split("/")
    regex = _regex(pattern)
    return any(regex.fullmatch("/".join(parts[: end + 1])) for end in range(len(parts)))


def excluded(path: str) -> bool:
    return any(_matches(pattern, path) for pattern in _patterns())


def _copied() -> list[str]:
    """The build-context sources of the Dockerfile's COPY lines (not those copied from another stage)."""
    sources = []
    for line in (REPO / "Dockerfile").read_text().splitlines():
        if line.startswith("COPY ") and "--from=" not in line:
            sources.extend(line.split()[1:-1])
    return sources


def _default_checkpoints() -> set[str]:
    defaults = (
        VerificationSettings.model_fields["verifier_model"].default,
        VerificationSettings.model_fields["evidence_model"].default,
        EnginesConfig.model_fields["reranker_model"].default,
    )
    folders = {Path(default).resolve() for default in defaults}
    # A checkpoint stored as an overlay (verifier.checkpoint_overlay) is served together with its base.
    bases = {overlay.base for folder in folders if (overlay := Overlay.read(folder)) is not None}
    return {folder.relative_to(REPO).as_posix() for folder in folders | bases}


def test_it_uses_no_negated_pattern_the_check_does_not_read() -> None:
    assert not [pattern for pattern in _patterns() if pattern.startswith("!")]


@pytest.mark.parametrize("source", _copied())
def test_what_the_dockerfile_copies_is_in_the_context(source: str) -> None:
    assert (REPO / source).exists(), source
    assert not excluded(source), source


def test_the_checkpoints_the_defaults_serve_are_in_the_context() -> None:
    served = _default_checkpoints()
    assert served == {
        "verifier/models/verimed-mpnet-product-verifier",
        "verifier/models/verimed-mpnet-verifier",  # the base its overlay is read on
        "verifier/models/verimed-evidence-late-fusion",
        "indexer/models/verimed-minilm-reranker",
    }
    for folder in served:
        for file in (REPO / folder).iterdir():
            assert not excluded(file.relative_to(REPO).as_posix()), file


def test_every_other_checkpoint_stays_out() -> None:
    kept = _default_checkpoints()
    others = [
        f"{parent}/{folder.name}"
        for parent in MODEL_FOLDERS
        for folder in (REPO / parent).iterdir()
        if folder.is_dir() and f"{parent}/{folder.name}" not in kept and not folder.name.startswith("__")
    ]
    assert others, "the repository keeps a checkpoint no default serves"
    assert [folder for folder in others if not excluded(folder)] == []


@pytest.mark.parametrize(
    "path",
    [
        ".git/HEAD",
        ".venv/bin/python",
        "var/db.sqlite3",
        ".env",
        "tests/conftest.py",
        "test-artifacts/answer.png",
        "benchmarks/README.md",
        "webapp/__pycache__/settings.cpython-311.pyc",
        "verifier/models/__pycache__/x.pyc",
        "static/vendor/pdfjs/build/pdf.min.mjs",
    ],
)
def test_local_state_and_development_files_stay_out(path: str) -> None:
    assert excluded(path), path


@pytest.mark.parametrize("path", ["webapp/settings.py", "static/verimed.js", "README.md", "manage.py"])
def test_the_code_goes_in(path: str) -> None:
    assert not excluded(path), path


def test_the_matcher_reads_docker_patterns() -> None:
    assert _matches("var", "var/x/y")
    assert not _matches("var", "webapp/var")
    assert _matches("**/__pycache__", "a/b/__pycache__/c.pyc")
    assert _matches("*.egg-info", "verimed.egg-info/PKG-INFO")
    assert _matches("**/*.pyc", "a.pyc")
    assert not _matches("tests", "webapp/tests.py")
    assert not _matches("*.egg-info", "webapp/x.egg-info")
