"""Stable identities and timestamps of the evidence contract (§8).

Every ID is a SHA-256 over a JSON array of its recorded inputs, so it can be recomputed
from what the row or packet records, and no choice of separator can make two different
input tuples collide.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path

EVIDENCE_ID_PREFIX = "ev:sha256:"
PACKET_ID_PREFIX = "pk:sha256:"
CLAIM_ID_PREFIX = "claim:"
SOURCE_ID_PREFIX = "akm:"
_FILE_CHUNK_BYTES = 1 << 20


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_text(text: str) -> str:
    """SHA-256 of the UTF-8 encoding of ``text`` (the excerptChecksum of an excerpt)."""
    return sha256_bytes(text.encode("utf-8"))


def sha256_file(path: Path) -> str:
    """SHA-256 of a file's bytes, read in chunks so large sources do not fill memory."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(_FILE_CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def _digest_of(parts: list[str | int | None]) -> str:
    return sha256_text(json.dumps(parts, ensure_ascii=False, separators=(",", ":")))


def source_id(namespace: str, relative_path: str) -> str:
    """Canonical source identity: ``akm:<namespace>:<relative path>`` with '/' separators."""
    if not namespace or ":" in namespace:
        raise ValueError(f"source namespace must be non-empty and contain no ':': {namespace!r}")
    normalised = relative_path.replace("\\", "/")
    while normalised.startswith("./"):
        normalised = normalised[2:]
    if not normalised or normalised.startswith("/") or ".." in normalised.split("/"):
        raise ValueError(f"source path must be relative and not escape its root: {relative_path!r}")
    return f"{SOURCE_ID_PREFIX}{namespace}:{normalised}"


def evidence_id(
    schema_version: str,
    source_id: str,
    revision: str,
    checksum: str | None,
    locator_value: str,
) -> str:
    """``ev:sha256:<hex>``; a new source revision, checksum or locator gives a new ID (§4.1)."""
    return EVIDENCE_ID_PREFIX + _digest_of(
        ["EvidenceRow", schema_version, source_id, revision, checksum, locator_value]
    )


def packet_id(task_id: str, query: str, manifest_version: str, run_sequence: int) -> str:
    """``pk:sha256:<hex>`` over task, query digest, manifest version and run sequence (§8)."""
    return PACKET_ID_PREFIX + _digest_of(
        ["EvidencePacket", task_id, sha256_text(query), manifest_version, run_sequence]
    )


def claim_id(scope: str, claim_text: str) -> str:
    """``claim:<16 hex>`` for a claim text within a scope (a task or packet ID).

    Whitespace is collapsed first so a re-wrapped claim keeps its identity.
    """
    normalised = " ".join(claim_text.split())
    return CLAIM_ID_PREFIX + _digest_of(["Claim", scope, normalised])[:16]


def utc_now_iso() -> str:
    """Current UTC time as an RFC 3339 timestamp with millisecond precision, e.g. 2026-07-20T00:00:00.000Z."""
    return format_timestamp(datetime.now(UTC))


def format_timestamp(moment: datetime) -> str:
    if moment.tzinfo is None:
        raise ValueError("timestamps must be timezone-aware")
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def parse_timestamp(text: str) -> datetime:
    """Parse a contract timestamp (RFC 3339) into an aware datetime."""
    moment = datetime.fromisoformat(text.replace("z", "Z").replace("t", "T"))
    if moment.tzinfo is None:
        raise ValueError(f"timestamp has no offset: {text!r}")
    return moment


__all__ = [
    "CLAIM_ID_PREFIX",
    "EVIDENCE_ID_PREFIX",
    "PACKET_ID_PREFIX",
    "claim_id",
    "evidence_id",
    "format_timestamp",
    "packet_id",
    "parse_timestamp",
    "sha256_bytes",
    "sha256_file",
    "sha256_text",
    "source_id",
    "utc_now_iso",
]
