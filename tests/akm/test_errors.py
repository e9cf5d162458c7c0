"""One model-unavailable error: the runtime raises the class the service and the API report."""

from __future__ import annotations

from pathlib import Path

import pytest

import akm.runtime
import akm.service.errors
from akm.errors import ModelUnavailableError, ServiceError
from akm.runtime import Runtime
from akm.settings import Settings


def test_the_runtime_and_the_service_share_one_class() -> None:
    assert akm.runtime.ModelUnavailableError is ModelUnavailableError
    assert akm.service.errors.ModelUnavailableError is ModelUnavailableError
    assert akm.service.errors.ServiceError is ServiceError
    assert issubclass(ModelUnavailableError, ServiceError)


def test_an_error_naming_a_model_carries_its_parts() -> None:
    error = ModelUnavailableError.could_not_load("target", "smollm2", "no weights")
    assert str(error) == "the target model 'smollm2' could not be loaded: no weights"
    assert (error.kind, error.name, error.reason) == ("target", "smollm2", "no weights")
    plain = ModelUnavailableError("the model stopped")
    assert (str(plain), plain.kind, plain.name, plain.reason) == ("the model stopped", None, None, None)


def test_a_missing_embedding_model_is_the_service_error(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, embedding_model=str(tmp_path / "no-such-model"))
    runtime = Runtime(settings)
    with pytest.raises(akm.service.errors.ModelUnavailableError, match="the embedding model") as raised:
        _ = runtime.embedder
    assert raised.value.kind == "embedding"
