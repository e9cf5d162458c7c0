"""The committed OpenAPI document is the generated one, and it documents every error as a problem."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from api_fakes import ApiHarness

from akm.api.server import openapi_json
from akm.cli import main

REPO = Path(__file__).resolve().parents[3]
COMMITTED = REPO / "docs" / "openapi.json"


def test_committed_document_equals_the_generated_one(api: ApiHarness) -> None:
    assert COMMITTED.read_text(encoding="utf-8") == openapi_json(api.app), (
        "run `akm openapi` and commit docs/openapi.json"
    )


def test_every_reference_resolves() -> None:
    text = COMMITTED.read_text(encoding="utf-8")
    document = json.loads(text)
    names = set(document["components"]["schemas"])
    referenced = set(re.findall(r'"#/components/schemas/([^"]+)"', text))
    assert referenced - names == set()


def _operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(path, method, op) for path, item in document["paths"].items() for method, op in item.items()]


def test_every_error_response_is_documented_as_problem_json() -> None:
    document = json.loads(COMMITTED.read_text(encoding="utf-8"))
    checked = 0
    for path, method, operation in _operations(document):
        for status, response in operation["responses"].items():
            if int(status) >= 400:
                assert list(response["content"]) == ["application/problem+json"], (method, path, status)
                checked += 1
    assert checked >= 40


@pytest.mark.parametrize(
    ("path", "method", "statuses"),
    [
        ("/v1/answers", "post", {"200", "400", "401", "403", "413", "415", "422", "429", "503"}),
        ("/v1/validate", "post", {"200", "400", "401", "403", "413", "415", "422", "429"}),
        ("/v1/packets/{packet_id}", "get", {"200", "401", "403", "404", "422", "429", "503"}),
        ("/readyz", "get", {"200", "503"}),
    ],
    ids=["answers", "validate", "packet", "readyz"],
)
def test_documented_statuses(path: str, method: str, statuses: set[str]) -> None:
    document = json.loads(COMMITTED.read_text(encoding="utf-8"))
    assert set(document["paths"][path][method]["responses"]) == statuses


def test_openapi_check_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    written = tmp_path / "openapi.json"
    assert main(["--data-dir", str(tmp_path), "openapi", "--output", str(written)]) == 0
    assert written.read_text(encoding="utf-8") == COMMITTED.read_text(encoding="utf-8")
    assert main(["--data-dir", str(tmp_path), "openapi", "--output", str(written), "--check"]) == 0
    written.write_text("{}\n", encoding="utf-8")
    assert main(["--data-dir", str(tmp_path), "openapi", "--output", str(written), "--check"]) == 1
    assert "differs from the generated document" in capsys.readouterr().err
    assert (
        main(["--data-dir", str(tmp_path), "openapi", "--output", str(tmp_path / "none.json"), "--check"])
        == 2
    )


@pytest.mark.parametrize(
    ("flags", "message"),
    [(["--port", "0"], "--port must be 1-65535"), (["--workers", "0"], "--workers must be at least 1")],
    ids=["port", "workers"],
)
def test_serve_rejects_bad_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    assert main(["--data-dir", str(tmp_path), "serve", *flags]) == 2
    assert message in capsys.readouterr().err
