"""Running the app under uvicorn: the per-worker factory and JSON logging."""

from __future__ import annotations

import json
from typing import Any

from fastapi import FastAPI

from akm import tracing
from akm.api.app import create_app
from akm.settings import load_settings


def app_from_environment() -> FastAPI:
    """uvicorn ``--factory`` entry point: each worker builds its app from AKM_* variables."""
    settings = load_settings()
    tracing.configure(settings.tracing)
    return create_app(settings)


def log_config(level: str) -> dict[str, Any]:
    """uvicorn logging: JSON lines on stderr; the app writes its own access log with request IDs."""
    handler = {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": "akm.api.middleware.JsonLogFormatter"}},
        "handlers": {"stderr": handler},
        "loggers": {
            "akm": {"handlers": ["stderr"], "level": level.upper(), "propagate": False},
            "uvicorn.error": {"handlers": ["stderr"], "level": level.upper(), "propagate": False},
            "uvicorn.access": {"handlers": [], "level": "WARNING", "propagate": False},
        },
    }


def openapi_json(app: FastAPI) -> str:
    """The OpenAPI document as committed in docs/openapi.json (sorted keys, trailing newline)."""
    return json.dumps(app.openapi(), indent=2, sort_keys=True) + "\n"
