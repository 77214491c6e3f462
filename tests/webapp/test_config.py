"""The settings tree (webapp/config.py): read from the environment as django-environ read it, refusing a bad value at
start-up by name (and a test fake where VERIMED_PRODUCTION is on), read by the site and the pipeline as it is, and the
source of the table in docs/configuration.md."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.exceptions import ImproperlyConfigured
from pytest_django.fixtures import Settings

from generator.generation_settings import GenerationSettings
from generator.registry import LLMS, TOKEN_COUNTERS
from indexer.registry import EMBEDDERS, LEXICAL_INDEXES, VECTOR_INDEXES
from tests.support import REPO
from verifier.registry import CLAIM_CLASSIFIERS, EVIDENCE_FINDERS
from webapp.config import (
    ADAPTER_VARIABLES,
    config_from_environment,
    config_variables,
    group_variables,
    variable_places,
)
from webapp.config_groups import BASE_DIR
from webapp.config_table import TABLE_END, TABLE_START, settings_table, with_settings_table
from webapp.qa.pipeline import default_pipeline_settings
from webapp.qa.verification_settings import VerificationSettings


@pytest.fixture
def bare_environment(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No VERIMED_* variable set, as on a fresh machine; set the ones a test needs on the returned monkeypatch."""
    for name in list(os.environ):
        if name.startswith("VERIMED_"):
            monkeypatch.delenv(name)
    return monkeypatch


def test_the_configuration_page_shows_the_table_the_tree_renders() -> None:
    page = (REPO / "docs" / "configuration.md").read_text()

    assert with_settings_table(page, settings_table()) == page, (
        "docs/configuration.md differs from webapp/config.py: run "
        "`python manage.py settings_table --write docs/configuration.md`"
    )


def test_the_table_lists_every_variable_of_the_tree_once() -> None:
    listed = re.findall(r"^\| `([A-Z0-9_]+)` \|", settings_table(), flags=re.MULTILINE)

    assert listed == config_variables()
    assert len(set(listed)) == len(listed)
    assert {
        "VERIMED_MAX_QUESTION_CHARS",
        "VERIMED_QUESTIONS_PER_HOUR",
        "VERIMED_MAX_QUEUED_QUESTIONS",
        "VERIMED_LOGIN_FAILURE_LIMIT",
        "VERIMED_UPDATES_SYNC_HOUR",
    } <= set(listed)


def test_writing_the_table_replaces_only_what_lies_between_the_markers() -> None:
    page = f"# Title\nbefore\n{TABLE_START}\nstale rows\n{TABLE_END}\nafter\n"

    written = with_settings_table(page, "| new |")

    assert written == f"# Title\nbefore\n{TABLE_START}\n| new |\n{TABLE_END}\nafter\n"
    with pytest.raises(ValueError, match="markers"):
        with_settings_table("# A page without markers\n", "| new |")


def test_settings_py_reads_no_verimed_variable_itself() -> None:
    source = (REPO / "webapp" / "settings.py").read_text()

    assert not re.findall(r'env\.\w+\(\s*"(VERIMED_\w+)"', source)


def test_the_defaults_are_the_embedded_profile(bare_environment: pytest.MonkeyPatch) -> None:
    config = config_from_environment()

    var = BASE_DIR / "var"
    assert (config.paths.var_dir, config.paths.index_dir, config.paths.pubmed_dir) == (
        var,
        var / "index",
        var / "pubmed",
    )
    assert config.paths.data_dir == (BASE_DIR.parent / "shared" / "data").resolve()
    assert config.paths.ingest_dirs == [var / "pubmed", config.paths.data_dir / "pubmed"]
    assert config.deployment.production is False
    assert config.engines.qdrant_api_key is None
    assert config.generation.max_tokens == 1225
    default_verifier = BASE_DIR / "verifier" / "models" / "verimed-mpnet-product-verifier"
    assert config.verification.verifier_model == str(default_verifier)
    assert config.verification.verifier_precision == "auto"


def test_values_parse_as_django_environ_parsed_them(bare_environment: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name, value in {
        "VERIMED_VAR_DIR": str(tmp_path / "var" / ".." / "state"),
        "VERIMED_INGEST_DIRS": f"{tmp_path / 'a'},,{tmp_path / 'b' / '..' / 'c'}",
        "VERIMED_VERIFIER_LABELS": "NO_EVIDENCE,SUPPORT,CONTRADICT",
        "VERIMED_PRODUCTION": "yes",
        "VERIMED_PUBMED_KEEP_FILES": "0",
        "VERIMED_QDRANT_API_KEY": "",  # empty counts as unset, as .env.example's `VERIMED_QDRANT_API_KEY=` means
        "VERIMED_LLM_TEMPERATURE": "0.3",
    }.items():
        bare_environment.setenv(name, value)

    config = config_from_environment()

    state = tmp_path / "state"
    assert (config.paths.var_dir, config.paths.index_dir, config.paths.model_cache) == (
        state,
        state / "index",
        state / "models",
    )
    assert config.paths.ingest_dirs == [tmp_path / "a", tmp_path / "c"]
    assert config.verification.verifier_labels == ["NO_EVIDENCE", "SUPPORT", "CONTRADICT"]
    assert (config.deployment.production, config.pubmed.keep_files) == (True, False)
    assert config.engines.qdrant_api_key is None
    assert config.generation.temperature == 0.3


def test_every_bad_value_is_named_with_its_reason(bare_environment: pytest.MonkeyPatch) -> None:
    bare_environment.setenv("VERIMED_LLM_MAX_TOKENS", "8193")  # GenerationSettings' own limit
    bare_environment.setenv("VERIMED_VERIFIER", "deberta")
    bare_environment.setenv("VERIMED_CELERY_EAGER", "treu")  # django-environ read it as false
    bare_environment.setenv("VERIMED_LLM_API_KEY", "secret")

    with pytest.raises(ImproperlyConfigured) as refused:
        config_from_environment()

    message = str(refused.value)
    assert "VERIMED_LLM_MAX_TOKENS='8193': Input should be less than or equal to 8192" in message
    assert "VERIMED_VERIFIER='deberta': Input should be 'cross-encoder', 'llm-judge' or 'fake'" in message
    assert "VERIMED_CELERY_EAGER='treu'" in message
    assert "secret" not in message


def test_a_bad_value_stops_start_up_with_an_error_naming_the_variable(tmp_path: Path) -> None:
    # In a process of its own: this one's settings are loaded already and must stay as they are.
    base = {key: os.environ[key] for key in ("PATH", "HOME", "LANG") if key in os.environ}
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=REPO,
        env={
            **base,
            "DJANGO_SETTINGS_MODULE": "webapp.settings",
            "VERIMED_VAR_DIR": str(tmp_path),
            "VERIMED_LLM_MAX_TOKENS": "abc",
        },
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode != 0
    assert "django.core.exceptions.ImproperlyConfigured: invalid settings in the environment:" in result.stderr
    assert "VERIMED_LLM_MAX_TOKENS='abc': Input should be a valid integer" in result.stderr


def test_the_site_reads_the_tree_read_from_the_environment() -> None:
    assert config_from_environment() == django_settings.VERIMED  # this test process's environment, read again


def test_the_pipeline_groups_are_the_objects_each_answer_stores() -> None:
    pipeline = default_pipeline_settings()

    assert type(pipeline.generation) is GenerationSettings
    assert type(pipeline.verification) is VerificationSettings
    assert (pipeline.generation, pipeline.verification) == (
        django_settings.VERIMED.generation,
        django_settings.VERIMED.verification,
    )


def test_each_variable_names_one_field_of_one_group() -> None:
    places = variable_places()

    assert len(places) == len(config_variables()) == len(set(places.values()))
    assert places["VERIMED_LLM_MAX_TOKENS"] == ("generation", "max_tokens")
    assert places["VERIMED_VERIFIER_INPUT"] == ("verification", "input")
    assert places["VERIMED_QDRANT_URL"] == ("engines", "qdrant_url")
    assert "abstract_chars" not in group_variables(GenerationSettings).values()  # a pipeline field the site keeps


def test_the_pipeline_follows_the_values_a_test_replaces(settings: Settings) -> None:
    settings.VERIMED = settings.VERIMED.replace(
        VERIMED_LLM_MAX_TOKENS=150,
        VERIMED_VERIFIER_MODEL=Path("/models/deberta"),
        VERIMED_VERIFIER_LABELS=["NO_EVIDENCE", "SUPPORT", "CONTRADICT"],
        VERIMED_LLM_MODEL="other-model",
    )

    pipeline = default_pipeline_settings()

    assert pipeline.generation.max_tokens == 150
    assert pipeline.generation.sampling().max_tokens == 150
    assert pipeline.verification.verifier_model == "/models/deberta"
    assert pipeline.verification.verifier_labels == ["NO_EVIDENCE", "SUPPORT", "CONTRADICT"]
    assert pipeline.llm_model == "other-model"
    assert type(pipeline.generation) is GenerationSettings  # the plain pipeline object, as stored


def test_a_replaced_value_is_checked_as_at_start_up() -> None:
    config = config_from_environment()

    with pytest.raises(ImproperlyConfigured, match=r"VERIMED_LLM_MAX_TOKENS=5: Input should be greater than or equal"):
        config.replace(VERIMED_LLM_MAX_TOKENS=5)
    with pytest.raises(ImproperlyConfigured, match=r"VERIMED_QUESTIONS_PER_HOUR=-1: Input should be greater than"):
        config.replace(VERIMED_QUESTIONS_PER_HOUR=-1)
    with pytest.raises(ImproperlyConfigured, match="not a VeriMed setting: VERIMED_NO_SUCH_THING"):
        config.replace(VERIMED_NO_SUCH_THING=1)


@pytest.mark.parametrize("variable", ADAPTER_VARIABLES)
def test_production_refuses_a_test_fake_adapter_naming_the_variables(
    bare_environment: pytest.MonkeyPatch, variable: str
) -> None:
    bare_environment.setenv("VERIMED_PRODUCTION", "true")
    bare_environment.setenv(variable, "fake")

    with pytest.raises(ImproperlyConfigured) as refused:
        config_from_environment()

    assert str(refused.value).startswith(f"VERIMED_PRODUCTION is on but {variable}=fake chooses a test fake")


def test_production_accepts_the_real_adapters(bare_environment: pytest.MonkeyPatch) -> None:
    bare_environment.setenv("VERIMED_PRODUCTION", "true")
    bare_environment.setenv("VERIMED_LLM_SERVER_KIND", "vllm")
    bare_environment.setenv("VERIMED_EMBEDDING_BACKEND", "torch")
    bare_environment.setenv("VERIMED_VERIFIER", "llm-judge")
    bare_environment.setenv("VERIMED_EVIDENCE_FINDER", "ranked")

    assert config_from_environment().deployment.production is True
    bare_environment.delenv("VERIMED_LLM_SERVER_KIND")
    bare_environment.delenv("VERIMED_EMBEDDING_BACKEND")
    bare_environment.delenv("VERIMED_VERIFIER")
    bare_environment.delenv("VERIMED_EVIDENCE_FINDER")
    defaults = config_from_environment()  # the defaults choose real adapters
    assert [defaults.value(variable) for variable in ADAPTER_VARIABLES] == [
        "onnx-int8",
        "llama.cpp",
        "cross-encoder",
        "auto",
    ]


def test_the_embedded_profile_may_choose_a_test_fake(bare_environment: pytest.MonkeyPatch) -> None:
    for variable in ADAPTER_VARIABLES:
        bare_environment.setenv(variable, "fake")

    assert [config_from_environment().value(variable) for variable in ADAPTER_VARIABLES] == ["fake"] * 4


def test_every_registry_offering_a_fake_is_chosen_by_an_adapter_variable() -> None:
    chosen = {"VERIMED_EMBEDDING_BACKEND": [EMBEDDERS], "VERIMED_LLM_SERVER_KIND": [LLMS, TOKEN_COUNTERS],
              "VERIMED_VERIFIER": [CLAIM_CLASSIFIERS], "VERIMED_EVIDENCE_FINDER": [EVIDENCE_FINDERS]}  # fmt: skip
    registries = [EMBEDDERS, LEXICAL_INDEXES, VECTOR_INDEXES, LLMS, TOKEN_COUNTERS, CLAIM_CLASSIFIERS, EVIDENCE_FINDERS]

    assert list(chosen) == list(ADAPTER_VARIABLES)
    offering_a_fake = [registry.role for registry in registries if "fake" in registry.names]
    assert offering_a_fake == [registry.role for registries in chosen.values() for registry in registries]
