"""The one settings object: defaults from the bundled ``akm/config/settings.yaml``, then AKM_*
environment variables, then explicit overrides (CLI flags)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)

from akm.config import DEFAULT_MANIFEST_FILE, DEFAULT_SETTINGS_FILE


class Settings(BaseSettings):
    """Runtime configuration of the service, the CLI and the benchmarks."""

    model_config = SettingsConfigDict(
        env_prefix="AKM_",
        yaml_file=str(DEFAULT_SETTINGS_FILE),
        extra="forbid",
        validate_default=True,
    )

    data_dir: Path = Field(default=Path("~/.local/share/akm"))
    database_url: str = ""
    # Empty: the default manifest shipped in the package (akm/config/manifest.yaml), which scopes
    # the Markdown under docs/ of the working directory.
    manifest_path: Path = Field(default=DEFAULT_MANIFEST_FILE)
    target_model: str = "smollm2"
    draft_model: str = ""
    draft_head: str = "auto"
    embedding_model: str = "minilm"
    nli_model: str = ""
    support_threshold: float = Field(default=0.8, ge=0.0, le=1.0)
    device: str = "cpu"
    dtype: str = "float32"
    prepack_weights: bool = False
    torch_threads: int = Field(default=0, ge=0)
    max_new_tokens: int = Field(default=160, ge=0, le=4096)
    # Output tokens of earlier answers the decoder keeps in memory to draft from (decoding.history);
    # 0: none.
    decode_history_tokens: int = Field(default=16384, ge=0)
    # Keep the target's KV cache between answers; a new prompt prefills only what it does not share.
    decode_prefix_reuse: bool = True
    # OpenTelemetry spans per answer stage (akm.tracing): off, console (stderr) or otlp.
    tracing: Literal["off", "console", "otlp"] = "off"
    # REST uploads (POST /v1/sources): a folder inside one of the manifest's file roots, relative
    # to the manifest's project root (or absolute); empty: uploads are refused.
    upload_root: str = ""
    upload_max_file_bytes: int = Field(default=16_777_216, ge=1)
    upload_max_files: int = Field(default=20, ge=1)
    # REST API keys (docs/security.md): required on every address when true; `akm serve` requires
    # them anyway when it binds an address other machines can reach.
    require_api_keys: bool = False
    # Requests per minute per key and worker process (token bucket); 0: no limit.
    api_key_requests_per_minute: int = Field(default=120, ge=0)
    # A remote OpenAI-compatible generator (akm.answer.remote), used instead of loading the target
    # model when target_model is "openai+http(s)://host:port/v1#model"; the URL and the model name
    # come from that string. The API key is read from the environment variable named here, never
    # from a settings file.
    generator_api_key_env: str = ""
    generator_endpoint: Literal["completions", "chat"] = "completions"
    generator_connect_timeout_s: float = Field(default=5.0, gt=0.0)
    generator_read_timeout_s: float = Field(default=60.0, gt=0.0)
    generator_retries: int = Field(default=2, ge=0, le=10)
    generator_backoff_s: float = Field(default=0.5, ge=0.0)
    generator_max_concurrency: int = Field(default=4, ge=1)

    @field_validator("data_dir", mode="after")
    @classmethod
    def _expand_data_dir(cls, value: Path) -> Path:
        return value.expanduser()

    @field_validator("manifest_path", mode="before")
    @classmethod
    def _default_manifest(cls, value: object) -> object:
        return DEFAULT_MANIFEST_FILE if value is None or value == "" else value

    @field_validator("manifest_path", mode="after")
    @classmethod
    def _resolve_manifest(cls, value: Path) -> Path:
        # A relative path is the user's: it names a file from the working directory.
        return value.expanduser().absolute()

    @field_validator("dtype")
    @classmethod
    def _known_dtype(cls, value: str) -> str:
        if value not in {"float32", "float64", "bfloat16", "float16"}:
            raise ValueError(f"unknown dtype {value!r}; use float32, float64, bfloat16 or float16")
        return value

    @property
    def resolved_database_url(self) -> str:
        """The database URL, defaulting to a SQLite file inside the data directory."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{self.data_dir / 'akm.sqlite3'}"

    @property
    def model_cache_dir(self) -> Path:
        return self.data_dir / "models"

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Order is priority: explicit (CLI) > environment > the bundled settings.yaml.
        return (init_settings, env_settings, YamlConfigSettingsSource(settings_cls))


def load_settings(**overrides: Any) -> Settings:
    """Build settings; ``overrides`` (from CLI flags) win over the environment.

    ``None`` values are dropped so an absent flag never masks the environment.
    """
    return Settings(**{key: value for key, value in overrides.items() if value is not None})
