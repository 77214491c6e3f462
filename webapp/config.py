"""VeriMed's settings tree: every VERIMED_* variable, typed, validated and documented in one place.

`config_from_environment()` reads the environment once, when `webapp/settings.py` is imported, and raises
ImproperlyConfigured naming each bad variable and why. settings.py derives the flat `VERIMED_*` Django settings from
the tree, so code keeps reading `settings.VERIMED_X` and tests keep overriding those names with pytest-django's
`settings` fixture. docs/configuration.md's table is rendered from the same tree (webapp/config_table.py).

Each group (webapp/config_groups.py) gathers one concern; its fields have short names (`llm.timeout_seconds`) and
are read from the variable their `validation_alias` names (`VERIMED_LLM_TIMEOUT_SECONDS`), so the names
docker-compose.yml, .env.example and the tests set are unchanged. Values parse as django-environ parsed them: lists
comma-separated, paths resolved, and an empty variable counts as unset.

The generation and verification groups are the pipeline's own GenerationSettings and VerificationSettings, subclassed
only to name each field's variable: types, defaults and limits stay declared once, in the pipeline, and a bad value
fails at start-up instead of at the first question. At request time the flat Django settings are the source of truth
(a test may have overridden any of them): `group_from_settings()` validates a group from them in one call, with the
checks of start-up, and `pipeline_settings()` hands on the plain pipeline object each answer stores.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Any, TypeVar

from django.core.exceptions import ImproperlyConfigured
from pydantic import BaseModel, Field, ValidationError
from pydantic_settings import BaseSettings, EnvSettingsSource, PydanticBaseSettingsSource, SettingsConfigDict

from webapp.config_groups import (
    DeploymentConfig,
    EnginesConfig,
    GenerationConfig,
    LimitsConfig,
    LlmConfig,
    PathsConfig,
    PubmedConfig,
    TasksConfig,
    VerificationConfig,
)


class _GroupedVariables(EnvSettingsSource):
    """Each group of the tree read from flat variables, a field from the one its validation_alias names.

    pydantic-settings' own source reads nested groups as GROUP__FIELD; the variables keep their historical flat
    names, so this source sorts them into their groups. It keeps the parent's reading of the environment (case
    sensitivity, empty values ignored).
    """

    def __call__(self) -> dict[str, Any]:
        return {
            name: {
                variable: self.env_vars[variable]
                for variable in group_variables(field.annotation)
                if self.env_vars.get(variable) is not None
            }
            for name, field in self.settings_cls.model_fields.items()
        }


class VerimedConfig(BaseSettings):
    model_config = SettingsConfigDict(frozen=True, case_sensitive=True, env_ignore_empty=True)

    deployment: DeploymentConfig = Field(title="Deployment")
    paths: PathsConfig = Field(title="Paths and data")
    engines: EnginesConfig = Field(title="Retrieval engines")
    llm: LlmConfig = Field(title="LLM server")
    generation: GenerationConfig = Field(title="Generation")
    verification: VerificationConfig = Field(title="Verification")
    pubmed: PubmedConfig = Field(title="PubMed files")
    limits: LimitsConfig = Field(title="Limits")
    tasks: TasksConfig = Field(title="Tasks")

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (_GroupedVariables(settings_cls),)


def group_variables(group: Any) -> dict[str, str]:
    """The variables a group reads, each with the field it fills."""
    return {
        field.validation_alias: name
        for name, field in group.model_fields.items()
        if isinstance(field.validation_alias, str)
    }


def config_variables() -> list[str]:
    """Every variable the tree reads, in the tree's order."""
    return [variable for field in VerimedConfig.model_fields.values() for variable in group_variables(field.annotation)]


def config_from_environment() -> VerimedConfig:
    try:
        return VerimedConfig()
    except ValidationError as error:
        raise ImproperlyConfigured(f"invalid settings in the environment:\n{_problems(error)}") from None


Group = TypeVar("Group", bound=BaseModel)


def group_from_settings(group: type[Group], django_settings: Any) -> Group:
    """A group validated, in one call, from the flat Django settings of its variables (`settings.VERIMED_X`)."""
    # The flat settings hold the checkpoints as Path (as they always did); the pipeline stores them as text.
    values = {variable: getattr(django_settings, variable) for variable in group_variables(group)}
    plain = {variable: str(value) if isinstance(value, PurePath) else value for variable, value in values.items()}
    try:
        return group.model_validate(plain)
    except ValidationError as error:
        raise ImproperlyConfigured(f"invalid VeriMed settings:\n{_problems(error)}") from None


def _problems(error: ValidationError) -> str:
    lines = []
    for problem in error.errors():
        variable = next((part for part in problem["loc"] if isinstance(part, str) and part.isupper()), None)
        name = variable or ".".join(str(part) for part in problem["loc"])
        # Never echo what a key variable holds: start-up errors end up in logs.
        shown = "" if name.endswith("_KEY") else f"={problem['input']!r}"
        lines.append(f"  {name}{shown}: {problem['msg']}")
    return "\n".join(lines)
