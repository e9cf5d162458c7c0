"""compose.yaml (no container engine runs here): it parses, its commands are valid ``akm`` command
lines, and its services point at each other consistently."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from akm.cli import build_parser
from akm.settings import load_settings

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load((REPO / "compose.yaml").read_text(encoding="utf-8"))
    return document


def test_the_topology_has_its_three_services(compose: dict[str, Any]) -> None:
    assert set(compose["services"]) == {"postgres", "generator", "api"}
    assert compose["services"]["postgres"]["image"].startswith("pgvector/pgvector:pg16")
    depends = compose["services"]["api"]["depends_on"]
    assert depends == {
        "postgres": {"condition": "service_healthy"},
        "generator": {"condition": "service_healthy"},
    }
    assert set(compose["volumes"]) == {"postgres-data", "akm-data"}


@pytest.mark.parametrize("service", ["generator", "api"])
def test_service_commands_are_valid_akm_command_lines(compose: dict[str, Any], service: str) -> None:
    args = build_parser().parse_args(compose["services"][service]["command"])
    assert args.handler is not None
    assert args.host == "0.0.0.0"


def test_the_api_drafts_on_the_generator_and_stores_in_postgres(compose: dict[str, Any]) -> None:
    services = compose["services"]
    generator = build_parser().parse_args(services["generator"]["command"])
    assert generator.generator_only is True
    environment = services["api"]["environment"]
    settings = load_settings(
        target_model=environment["AKM_TARGET_MODEL"], database_url=environment["AKM_DATABASE_URL"]
    )
    assert settings.target_model == f"openai+http://generator:{generator.port}/v1#smollm2"
    postgres = services["postgres"]["environment"]
    assert settings.database_url.startswith(f"postgresql+psycopg://{postgres['POSTGRES_USER']}:")
    assert settings.database_url.endswith(f"@postgres:5432/{postgres['POSTGRES_DB']}")
    api = build_parser().parse_args(services["api"]["command"])
    assert services["api"]["ports"] == [f"8000-8001:{api.port}"]
    assert f"{generator.port}" in services["generator"]["expose"]
