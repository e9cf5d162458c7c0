"""uvicorn ``--factory`` target for the server and load tests: the real app over the store at
AKM_DATABASE_URL, with the fake answer service (AKM_TEST_WORD_DELAY_S between draft words)."""

from __future__ import annotations

import os

from api_fakes import FakeAnswerService, build_app
from fastapi import FastAPI

from akm.api import ApiLimits
from akm.settings import load_settings
from akm.store import open_store


def create() -> FastAPI:
    settings = load_settings()
    store = open_store(settings.resolved_database_url)
    answers = FakeAnswerService(store, word_delay_s=float(os.environ.get("AKM_TEST_WORD_DELAY_S", "0")))
    return build_app(store, answers, settings=settings, limits=ApiLimits())
