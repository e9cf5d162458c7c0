"""Stored chunk → candidate EvidenceRow, with the manifest's scope and authority decision.

Scope is decided here, before a row exists: a chunk whose source the manifest denies or
does not include is dropped by the lane and never becomes a candidate, so nothing about
it (path, title, excerpt, rank) can reach a packet (E11, §9).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from akm.contract.builders import build_candidate_row
from akm.contract.ids import format_timestamp
from akm.contract.models import (
    RELATIVE_PATH_PATTERN,
    Authority,
    AuthorityLevel,
    EvidenceRow,
    Freshness,
    LaneName,
    Locator,
    LocatorType,
    SourceType,
)
from akm.manifest import Manifest, SourceRef
from akm.store import StoredChunk

_AUTHORITY_LEVELS: tuple[AuthorityLevel, ...] = (
    "canonical",
    "official",
    "primary",
    "reviewed",
    "secondary",
    "internal",
    "unknown",
)
_LOCATOR_TYPES = frozenset(
    ("path", "line-range", "heading", "page", "symbol", "thread", "row", "url-fragment", "other")
)
_SOURCE_TYPES = frozenset(
    ("markdown", "web", "paper", "book", "code", "thread", "transcript", "database", "artifact", "other")
)
_RELATIVE_PATH = re.compile(RELATIVE_PATH_PATTERN)


@dataclass(frozen=True, slots=True)
class ScopeVerdict:
    """Whether a stored chunk may become a candidate of a lane, and under which source ref."""

    eligible: bool
    source_ref: SourceRef | None
    reason: str


class _VerdictMemo:
    """Scope verdicts of the most recent manifest, keyed by what the verdict reads of a chunk.

    A verdict depends only on the manifest and the chunk's paths, classification and source
    ref, so it is the same for every query; path parsing per candidate cost more than the
    rest of candidate filtering. Held for one manifest object at a time (manifests are frozen).
    """

    max_entries = 65536

    def __init__(self, manifest: Manifest | None = None) -> None:
        self.manifest = manifest
        self.verdicts: dict[tuple[str, str, str, str, str], ScopeVerdict] = {}


_memo = _VerdictMemo()


def scope_verdict(chunk: StoredChunk, manifest: Manifest, lane: LaneName) -> ScopeVerdict:
    """Security deny rules first, then classification, then the source ref's include and lanes."""
    global _memo
    memo = _memo
    if memo.manifest is not manifest or len(memo.verdicts) >= memo.max_entries:
        memo = _memo = _VerdictMemo(manifest)
    key = (chunk.path, chunk.canonical_uri, chunk.classification, chunk.source_ref_id, lane)
    verdict = memo.verdicts.get(key)
    if verdict is None:
        verdict = memo.verdicts[key] = _decide_scope(chunk, manifest, lane)
    return verdict


def _decide_scope(chunk: StoredChunk, manifest: Manifest, lane: LaneName) -> ScopeVerdict:
    relative = project_path(chunk)
    if manifest.denial_for_path(chunk.path) is not None or (
        relative != chunk.path and manifest.denial_for_path(relative) is not None
    ):
        return ScopeVerdict(False, None, "denied")
    if not manifest.classification_allowed(chunk.classification):
        return ScopeVerdict(False, None, "denied")
    ref = next((ref for ref in manifest.source_refs if ref.source_id == chunk.source_ref_id), None)
    if ref is None or not manifest.classification_allowed(ref.classification):
        return ScopeVerdict(False, None, "out-of-scope")
    if lane not in ref.retrieval_lanes:
        return ScopeVerdict(False, ref, "lane-not-enabled")
    return ScopeVerdict(True, ref, "in-scope")


def project_path(chunk: StoredChunk) -> str:
    """The project-relative path of a file source (its ``file:`` URI), else its stored path.

    The store keeps file paths relative to their source ref's root; canonical paths and
    direct reads use the project-relative form.
    """
    if chunk.canonical_uri.startswith("file:"):
        return chunk.canonical_uri.removeprefix("file:")
    return chunk.path


def authority_level(policy_name: str) -> AuthorityLevel:
    """The authority level a source ref's policy names (e.g. ``canonical-system-first``)."""
    words = set(re.split(r"[^a-z]+", policy_name.lower()))
    return next((level for level in _AUTHORITY_LEVELS if level in words), "unknown")


# A PDF chunk's locator value begins with its page (akm.ingest.formats): "page 3, characters 120-480".
_PAGE_VALUE = re.compile(r"^page (\d+),")


def locator_of(chunk: StoredChunk) -> Locator:
    locator_type: LocatorType = chunk.locator_type if chunk.locator_type in _LOCATOR_TYPES else "other"  # type: ignore[assignment]
    page = _PAGE_VALUE.match(chunk.locator_value) if locator_type == "page" else None
    return Locator(
        type=locator_type,
        value=chunk.locator_value,
        heading_path=chunk.heading_path or None,
        start_line=chunk.start_line,
        end_line=chunk.end_line if chunk.start_line is not None else None,
        page=int(page.group(1)) if page is not None else None,
    )


def _excerpt(text: str, max_bytes: int) -> str:
    encoded = text.encode("utf-8")
    if len(encoded) <= max_bytes:
        return text
    return encoded[:max_bytes].decode("utf-8", errors="ignore")


def candidate_from_chunk(
    chunk: StoredChunk,
    manifest: Manifest,
    source_ref: SourceRef,
    *,
    lane: LaneName,
    query: str,
    rank: int,
    result_set_id: str,
    parameters: Mapping[str, Any],
    raw_score: float | None,
    raw_score_meaning: str | None,
    matched_terms: Sequence[str] | None = None,
    relationship_path: Sequence[str] | None = None,
    latency_ms: float | None = None,
    at: str | None = None,
) -> EvidenceRow:
    """A candidate row for one lane hit; the raw score stays lane-local (E6)."""
    observed_at = format_timestamp(chunk.observed_at)
    level = authority_level(source_ref.authority_policy)
    source_type: SourceType = chunk.source_type if chunk.source_type in _SOURCE_TYPES else "other"  # type: ignore[assignment]
    excerpt = _excerpt(chunk.text, manifest.packet_policy.max_excerpt_bytes_per_row) or chunk.locator_value
    return build_candidate_row(
        source_id=chunk.source_id,
        canonical_uri=chunk.canonical_uri,
        canonical_path=canonical if _RELATIVE_PATH.match(canonical := project_path(chunk)) else None,
        source_type=source_type,
        classification=chunk.classification,  # type: ignore[arg-type]
        project_scopes=[manifest.project_id],
        revision=chunk.revision,
        checksum_algorithm="sha256",
        checksum=chunk.sha256,
        project_id=manifest.project_id,
        manifest_id=manifest.manifest_id,
        manifest_version=manifest.manifest_version,
        collection=manifest.retrieval.collection,
        locator=locator_of(chunk),
        authority=Authority(
            level=level,
            rationale=f"source ref {source_ref.source_id} is governed by authority policy {source_ref.authority_policy}",
            policy_ref=f"project-retrieval-manifest:sourceRefs:{source_ref.source_id}:authorityPolicy",
        ),
        freshness=Freshness(
            state="current",
            checked_at=observed_at,
            policy_ref=source_ref.freshness_policy,
            reason=f"the indexed version {chunk.revision} is the source's current version",
        ),
        lane=lane,
        query=query,
        rank=rank,
        result_set_id=result_set_id,
        parameters=parameters,
        excerpt=excerpt,
        title=chunk.title or None,
        raw_score=raw_score,
        raw_score_meaning=raw_score_meaning,
        matched_terms=matched_terms or None,
        relationship_path=relationship_path,
        latency_ms=latency_ms,
        heading=chunk.heading_path[-1] if chunk.heading_path else None,
        observed_at=observed_at,
        at=at,
    )
