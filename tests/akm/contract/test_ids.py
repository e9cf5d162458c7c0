"""Stable identities and timestamps."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from akm.contract.ids import (
    claim_id,
    evidence_id,
    format_timestamp,
    packet_id,
    parse_timestamp,
    sha256_bytes,
    sha256_file,
    sha256_text,
    source_id,
    utc_now_iso,
)
from akm.contract.models import TIMESTAMP_PATTERN

EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def test_sha256_of_bytes_text_and_file(tmp_path: Path) -> None:
    assert sha256_bytes(b"") == EMPTY_SHA256
    assert sha256_text("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    large = tmp_path / "large.bin"
    payload = bytes(range(256)) * 20_000  # 5 MB: more than one read chunk
    large.write_bytes(payload)
    assert sha256_file(large) == sha256_bytes(payload)


@pytest.mark.parametrize(
    ("namespace", "path", "expected"),
    [
        ("99-system", "SECURITY.md", "akm:99-system:SECURITY.md"),
        ("docs", "./guide/intro.md", "akm:docs:guide/intro.md"),
        ("docs", "guide\\intro.md", "akm:docs:guide/intro.md"),
    ],
    ids=["plain", "dot-prefix", "backslashes"],
)
def test_source_id(namespace: str, path: str, expected: str) -> None:
    assert source_id(namespace, path) == expected


@pytest.mark.parametrize(
    ("namespace", "path"),
    [("", "a.md"), ("a:b", "a.md"), ("docs", "/etc/passwd"), ("docs", "../secret.md"), ("docs", "")],
    ids=["empty-namespace", "colon-namespace", "absolute", "escaping", "empty-path"],
)
def test_source_id_rejects_unsafe_input(namespace: str, path: str) -> None:
    with pytest.raises(ValueError, match="source"):
        source_id(namespace, path)


def test_evidence_id_is_stable_and_sensitive_to_each_input() -> None:
    base = ("1.0.0", "akm:docs:a.md", "rev-1", "a" * 64, "## Heading")
    first = evidence_id(*base)
    assert first == evidence_id(*base)
    assert re.fullmatch(r"ev:sha256:[0-9a-f]{64}", first)
    variants = {
        evidence_id("1.0.1", *base[1:]),
        evidence_id(base[0], "akm:docs:b.md", *base[2:]),
        evidence_id(*base[:2], "rev-2", *base[3:]),
        evidence_id(*base[:3], "b" * 64, base[4]),
        evidence_id(*base[:3], None, base[4]),
        evidence_id(*base[:4], "## Other"),
    }
    assert len(variants) == 6
    assert first not in variants


def test_fields_cannot_be_shifted_into_each_other() -> None:
    assert evidence_id("1.0.0", "a:b", "c", None, "d") != evidence_id("1.0.0", "a", "b:c", None, "d")


def test_packet_id() -> None:
    first = packet_id("task-1", "question?", "1.0.0", 1)
    assert re.fullmatch(r"pk:sha256:[0-9a-f]{64}", first)
    assert first == packet_id("task-1", "question?", "1.0.0", 1)
    assert first != packet_id("task-1", "question?", "1.0.0", 2)
    assert first != packet_id("task-1", "question!", "1.0.0", 1)


def test_claim_id_ignores_rewrapping() -> None:
    assert claim_id("task", "Secrets are  never\nstored.") == claim_id("task", "Secrets are never stored.")
    assert claim_id("task", "a") != claim_id("other-task", "a")
    assert re.fullmatch(r"claim:[0-9a-f]{16}", claim_id("task", "a"))


def test_timestamps_match_the_contract_format() -> None:
    now = utc_now_iso()
    assert re.fullmatch(TIMESTAMP_PATTERN, now)
    assert now.endswith("Z")
    moment = datetime(2026, 7, 20, 9, 0, 0, 123456, tzinfo=timezone(timedelta(hours=9)))
    assert format_timestamp(moment) == "2026-07-20T00:00:00.123Z"
    assert parse_timestamp("2026-07-20T00:00:00+09:00") == datetime(2026, 7, 19, 15, 0, tzinfo=UTC)
    with pytest.raises(ValueError, match="timezone-aware"):
        format_timestamp(datetime(2026, 7, 20))
    with pytest.raises(ValueError, match="no offset"):
        parse_timestamp("2026-07-20T00:00:00")
