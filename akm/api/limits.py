"""Limits of the HTTP service, from AKM_API_* environment variables (separate from ``Settings``,
which configures the evidence plane and the models)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class ApiLimits(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="AKM_API_", extra="forbid")

    max_body_bytes: int = Field(default=1_048_576, ge=1024)
    # All request header names and values together; more is answered 431.
    max_header_bytes: int = Field(default=32_768, ge=1024)
    # Longest wait for the next piece of a request body; a client that stops sending gets 408.
    body_timeout_s: float = Field(default=30.0, gt=0.0)
    max_question_chars: int = Field(default=4000, ge=1)
    max_page_size: int = Field(default=500, ge=1)
    default_page_size: int = Field(default=50, ge=1)
    # Generations running at once in one worker; further requests wait up to
    # generation_wait_s for a slot, then get 429.
    generation_concurrency: int = Field(default=1, ge=1)
    generation_wait_s: float = Field(default=2.0, ge=0.0)
    load_models_at_startup: bool = False
