"""Loading the contract's JSON Schemas and validating documents against them.

The project schema (``akm/contract/schemas/evidence-contract.schema.json``) is the upstream
schema plus stricter constraints; the upstream schema is vendored unchanged in
``akm/contract/schemas/upstream/``. Both ship inside the package and are found through
:mod:`importlib.resources`.
Documents are dispatched on ``rowType``/``packetType`` so that an invalid row is reported
at its failing field rather than as one "matches neither alternative" error at the root.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal

import jsonschema
from jsonschema.exceptions import ValidationError as SchemaValidationError

from akm.contract.errors import ContractError
from akm.contract.models import TIMESTAMP_PATTERN
from akm.contract.violations import Violation, json_pointer


def _schema_dir() -> Path:
    folder = files("akm.contract").joinpath("schemas")
    if not isinstance(folder, Path):
        raise RuntimeError(f"the contract schemas are not installed as files with akm.contract: {folder}")
    return folder


SCHEMA_DIR = _schema_dir()
PROJECT_SCHEMA_PATH = SCHEMA_DIR / "evidence-contract.schema.json"
UPSTREAM_SCHEMA_PATH = SCHEMA_DIR / "upstream" / "evidence-row.schema.json"
MANIFEST_SCHEMA_PATH = SCHEMA_DIR / "project-retrieval-manifest.schema.json"

# Which schema a document is held to. ``contract``: the upstream AKM schema, whose IDs are any
# string of 8+ characters (the hashing recipe is a recommendation, upstream §8), for documents
# other projects produce; ``service``: this project's stricter schema, for the service's own output.
ValidationProfile = Literal["contract", "service"]
VALIDATION_PROFILES: tuple[ValidationProfile, ...] = ("contract", "service")
DEFAULT_PROFILE: ValidationProfile = "contract"

FORMAT_CHECKER = jsonschema.FormatChecker(formats=())
_TIMESTAMP = re.compile(TIMESTAMP_PATTERN)


@FORMAT_CHECKER.checks("date-time", raises=ValueError)
def _is_date_time(instance: object) -> bool:
    # jsonschema's own date-time check needs an optional package; this one is RFC 3339 plus a
    # calendar check (no 31 February), which the pattern alone cannot express.
    if not isinstance(instance, str):
        return True
    if not _TIMESTAMP.match(instance):
        return False
    from akm.contract.ids import parse_timestamp

    parse_timestamp(instance)
    return True


class SchemaLoadError(ContractError):
    """A schema file is missing or is not a valid Draft 2020-12 schema."""


def load_schema(path: Path) -> dict[str, Any]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise SchemaLoadError(f"cannot read schema {path}: {error}") from error
    if not isinstance(document, dict):
        raise SchemaLoadError(f"schema {path} is not a JSON object")
    try:
        jsonschema.Draft202012Validator.check_schema(document)
    except jsonschema.SchemaError as error:
        raise SchemaLoadError(
            f"schema {path} is not a valid Draft 2020-12 schema: {error.message}"
        ) from error
    return document


@dataclass(frozen=True)
class ContractSchema:
    """Validators of one contract schema, one per document kind."""

    path: Path
    rule_prefix: str
    document: dict[str, Any] = field(repr=False, hash=False, compare=False)

    @classmethod
    def load(cls, path: Path, rule_prefix: str) -> ContractSchema:
        return cls(path=path, rule_prefix=rule_prefix, document=load_schema(path))

    def _validator(self, definition: str | None) -> jsonschema.Draft202012Validator:
        root = {key: value for key, value in self.document.items() if key != "oneOf" or definition is None}
        if definition is not None:
            root["$ref"] = f"#/$defs/{definition}"
        return jsonschema.Draft202012Validator(root, format_checker=FORMAT_CHECKER)

    def validate(self, document: object, pointer_prefix: str = "") -> list[Violation]:
        """Every schema error as a Violation ``<prefix>:<keyword>`` with its JSON Pointer."""
        kind = document_kind(document)
        validator = _cached_validator(self, kind)
        return [
            Violation(
                rule_id=f"{self.rule_prefix}:{error.validator}",
                pointer=pointer_prefix + json_pointer(*error.absolute_path),
                message=_message(error),
            )
            for error in _leaf_errors(validator.iter_errors(document))
        ]


@cache
def _cached_validator(schema: ContractSchema, kind: str | None) -> jsonschema.Draft202012Validator:
    return schema._validator(kind)


def _leaf_errors(errors: Iterator[SchemaValidationError]) -> Iterator[SchemaValidationError]:
    for error in sorted(errors, key=lambda item: list(map(str, item.absolute_path))):
        if error.validator in ("oneOf", "anyOf") and error.context:
            yield jsonschema.exceptions.best_match(error.context)
        else:
            yield error


def _message(error: SchemaValidationError) -> str:
    message = error.message
    return message if len(message) <= 300 else message[:297] + "..."


def document_kind(document: object) -> str | None:
    """``EvidenceRow``, ``EvidencePacket`` or ``None`` when the document declares neither."""
    if isinstance(document, dict):
        if document.get("rowType") == "EvidenceRow":
            return "EvidenceRow"
        if document.get("packetType") == "EvidencePacket":
            return "EvidencePacket"
    return None


@cache
def project_schema(path: Path = PROJECT_SCHEMA_PATH) -> ContractSchema:
    return ContractSchema.load(path, "schema")


@cache
def upstream_schema(path: Path = UPSTREAM_SCHEMA_PATH) -> ContractSchema:
    return ContractSchema.load(path, "upstream")


def validate_against_schemas(
    document: object,
    *,
    profile: ValidationProfile = DEFAULT_PROFILE,
    upstream_schema_path: Path | None = None,
    check_upstream: bool = False,
    pointer_prefix: str = "",
) -> list[Violation]:
    """Schema violations under ``profile``.

    ``contract``: the upstream schema only (``upstream_schema_path``, else the vendored copy).
    ``service``: the project schema, plus the upstream one when asked (or a path is given).
    """
    if profile == "contract":
        return upstream_schema(upstream_schema_path or UPSTREAM_SCHEMA_PATH).validate(
            document, pointer_prefix
        )
    violations = project_schema().validate(document, pointer_prefix)
    if check_upstream or upstream_schema_path is not None:
        upstream = upstream_schema(upstream_schema_path or UPSTREAM_SCHEMA_PATH)
        violations.extend(upstream.validate(document, pointer_prefix))
    return violations


def validate_manifest(document: object, path: Path = MANIFEST_SCHEMA_PATH) -> list[Violation]:
    """Violations of the project retrieval manifest schema (``manifest:<keyword>``)."""
    return _manifest_schema(path).validate(document)


@cache
def _manifest_schema(path: Path) -> ContractSchema:
    return ContractSchema.load(path, "manifest")


__all__ = [
    "DEFAULT_PROFILE",
    "FORMAT_CHECKER",
    "MANIFEST_SCHEMA_PATH",
    "PROJECT_SCHEMA_PATH",
    "UPSTREAM_SCHEMA_PATH",
    "VALIDATION_PROFILES",
    "ContractSchema",
    "SchemaLoadError",
    "ValidationProfile",
    "document_kind",
    "load_schema",
    "project_schema",
    "upstream_schema",
    "validate_against_schemas",
    "validate_manifest",
]
