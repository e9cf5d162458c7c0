"""``EvidenceStore``: the repository over sources, chunks, links, evidence and audit records.

Reads are plain methods. Writes go through ``EvidenceStore.transaction()``, which yields a
``StoreTransaction``: one database transaction holding the store's write lock, committed
on success and rolled back on any exception, so an interrupted batch leaves nothing behind.
Evidence rows and packets are stored as their JSON documents (``to_json()`` output or a
plain mapping) plus the columns audits filter on.
"""

from __future__ import annotations

import bisect
import json
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray
from sqlalchemy import Engine, Select, and_, create_engine, func, or_, select, update
from sqlalchemy.orm import Session

from akm.store import dialects, migrate
from akm.store.models import (
    Chunk,
    ClaimRecord,
    ClaimSupport,
    CorpusFile,
    DecodeStatsRecord,
    EvidenceRowRecord,
    LaneRun,
    Link,
    PacketRecord,
    RejectedCandidate,
    Source,
    SourceVersion,
    StoreMeta,
    VerificationEvent,
)

CHUNK_GENERATION = "chunk_generation"
Vector = NDArray[np.float32]
# Verification states no later change can move a row out of (the contract's terminal states).
_TERMINAL_ROW_STATES = ("conflicted", "stale", "rejected")


def observed_revision(revision: str, observation: int) -> str:
    """The revision label of the ``observation``-th version with the same content (2 and up)."""
    return f"{revision}#{observation}"


class StoreError(RuntimeError):
    """The store cannot do what was asked (unknown id, bad record)."""


@runtime_checkable
class JsonDocument(Protocol):
    def to_json(self) -> Any: ...


def now_utc() -> datetime:
    return datetime.now(UTC)


def _as_utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def document_of(record: Mapping[str, Any] | JsonDocument) -> dict[str, Any]:
    """The JSON document of a record: ``to_json()`` output (dict or JSON text) or a mapping."""
    if isinstance(record, Mapping):
        return dict(record)
    produced = record.to_json()
    if isinstance(produced, str | bytes):
        produced = json.loads(produced)
    if not isinstance(produced, dict):
        raise StoreError(f"to_json() of {type(record).__name__} did not produce an object")
    return produced


@dataclass(frozen=True)
class StoredChunk:
    """A chunk with the identity of the source version it was cut from."""

    chunk_id: int
    source_id: str
    source_version_id: int
    ordinal: int
    locator_type: str
    locator_value: str
    heading_path: tuple[str, ...]
    start_line: int | None
    end_line: int | None
    text: str
    excerpt_sha256: str
    is_current: bool
    root_alias: str
    path: str
    canonical_uri: str
    source_type: str
    classification: str
    source_ref_id: str
    title: str | None
    external_id: str | None
    revision: str
    sha256: str
    observed_at: datetime


@dataclass(frozen=True)
class SourceState:
    """What ingest needs to decide whether a source changed."""

    source_id: str
    path: str
    current_version_id: int | None
    sha256: str | None
    revision: str | None
    deleted: bool


@dataclass(frozen=True)
class SourceVersionInfo:
    version_id: int
    source_id: str
    revision: str
    sha256: str
    path: str
    observed_at: datetime
    is_current: bool


@dataclass(frozen=True)
class LinkEdge:
    from_source_id: str
    from_chunk_id: int | None
    link_type: str
    target: str
    target_source_id: str | None
    anchor: str | None


@dataclass(frozen=True)
class NewChunk:
    """A chunk to store; ``ordinal`` orders chunks within one source version."""

    ordinal: int
    locator_type: str
    locator_value: str
    text: str
    excerpt_sha256: str
    heading_path: tuple[str, ...] = ()
    start_line: int | None = None
    end_line: int | None = None
    embedding: Vector | None = None


@dataclass(frozen=True)
class NewLink:
    link_type: str
    target: str
    target_source_id: str | None = None
    anchor: str | None = None
    from_ordinal: int | None = None


@dataclass(frozen=True)
class Rejection:
    stage: str
    reason: str
    query: str | None = None
    result_set_id: str | None = None
    packet_id: str | None = None
    source_id: str | None = None
    evidence_id: str | None = None
    detail: Mapping[str, Any] = field(default_factory=dict)
    at: datetime | None = None


@dataclass(frozen=True)
class RejectionRecord:
    id: int
    stage: str
    reason: str
    query: str | None
    result_set_id: str | None
    packet_id: str | None
    source_id: str | None
    evidence_id: str | None
    detail: dict[str, Any]
    at: datetime


@dataclass(frozen=True)
class VerificationEventRecord:
    id: int
    evidence_id: str
    from_state: str | None
    to_state: str
    actor: str
    reason: str
    packet_id: str | None
    detail: dict[str, Any]
    at: datetime


def _chunk_columns() -> Select[Any]:
    return select(
        Chunk.id,
        Chunk.source_id,
        Chunk.source_version_id,
        Chunk.ordinal,
        Chunk.locator_type,
        Chunk.locator_value,
        Chunk.heading_path,
        Chunk.start_line,
        Chunk.end_line,
        Chunk.text,
        Chunk.excerpt_sha256,
        Chunk.is_current,
        Source.root_alias,
        Source.path,
        Source.canonical_uri,
        Source.source_type,
        Source.classification,
        Source.source_ref_id,
        Source.title,
        Source.external_id,
        SourceVersion.revision,
        SourceVersion.sha256,
        SourceVersion.observed_at,
    ).select_from(
        Chunk.__table__.join(SourceVersion.__table__, Chunk.source_version_id == SourceVersion.id).join(
            Source.__table__, Chunk.source_id == Source.source_id
        )
    )


def _stored_chunk(row: Sequence[Any]) -> StoredChunk:
    observed = _as_utc(row[22])
    assert observed is not None
    return StoredChunk(
        chunk_id=row[0],
        source_id=row[1],
        source_version_id=row[2],
        ordinal=row[3],
        locator_type=row[4],
        locator_value=row[5],
        heading_path=tuple(row[6] or ()),
        start_line=row[7],
        end_line=row[8],
        text=row[9],
        excerpt_sha256=row[10],
        is_current=bool(row[11]),
        root_alias=row[12],
        path=row[13],
        canonical_uri=row[14],
        source_type=row[15],
        classification=row[16],
        source_ref_id=row[17],
        title=row[18],
        external_id=row[19],
        revision=row[20],
        sha256=row[21],
        observed_at=observed,
    )


class StoreTransaction:
    """Writes inside one transaction that holds the store's write lock."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._chunks_changed = False

    # ---- sources and chunks -------------------------------------------------------------

    def source_states(
        self, root_alias: str, source_ids: Sequence[str] | None = None
    ) -> dict[str, SourceState]:
        """Known sources under ``root_alias`` (optionally only ``source_ids``), read inside the lock."""
        return _source_states(self.session, root_alias, source_ids)

    def upsert_source(
        self,
        *,
        source_id: str,
        root_alias: str,
        path: str,
        canonical_uri: str,
        source_type: str,
        classification: str,
        source_ref_id: str,
        title: str | None = None,
        external_id: str | None = None,
    ) -> None:
        source = self.session.get(Source, source_id)
        if source is None:
            self.session.add(
                Source(
                    source_id=source_id,
                    root_alias=root_alias,
                    path=path,
                    canonical_uri=canonical_uri,
                    source_type=source_type,
                    classification=classification,
                    source_ref_id=source_ref_id,
                    title=title,
                    external_id=external_id,
                    current_version_id=None,
                    first_seen_at=now_utc(),
                    deleted_at=None,
                )
            )
            self.session.flush()
            return
        source.path = path
        source.canonical_uri = canonical_uri
        source.source_type = source_type
        source.classification = classification
        source.source_ref_id = source_ref_id
        source.title = title
        source.external_id = external_id
        source.deleted_at = None

    def add_source_version(
        self,
        *,
        source_id: str,
        revision: str,
        sha256: str,
        path: str,
        byte_size: int,
        chunks: Sequence[NewChunk],
        links: Sequence[NewLink] = (),
        observed_at: datetime | None = None,
    ) -> int:
        """Make a new current version of ``source_id`` with its chunks and links.

        The previous version, its chunks and links stay, marked not current. Content seen
        before (a revert) is still a new version, observed now: its revision label gets the
        observation count (``<revision>#2``), so rows read at it have evidence IDs of their
        own and the earlier observation keeps its time.
        """
        source = self.session.get(Source, source_id)
        if source is None:
            raise StoreError(f"unknown source {source_id!r}; upsert_source first")
        self._retire_current(source_id)
        seen_before = self.session.scalar(
            select(func.count())
            .select_from(SourceVersion)
            .where(SourceVersion.source_id == source_id, SourceVersion.sha256 == sha256)
        )
        if seen_before:
            revision = observed_revision(revision, seen_before + 1)
        version = SourceVersion(
            source_id=source_id,
            revision=revision,
            sha256=sha256,
            path=path,
            byte_size=byte_size,
            observed_at=observed_at or now_utc(),
            is_current=True,
        )
        self.session.add(version)
        self.session.flush()
        chunk_ids: dict[int, int] = {}
        chunk_rows = [
            Chunk(
                source_version_id=version.id,
                source_id=source_id,
                ordinal=chunk.ordinal,
                locator_type=chunk.locator_type,
                locator_value=chunk.locator_value,
                heading_path=list(chunk.heading_path),
                heading_text=" / ".join(chunk.heading_path),
                start_line=chunk.start_line,
                end_line=chunk.end_line,
                text=chunk.text,
                excerpt_sha256=chunk.excerpt_sha256,
                is_current=True,
                embedding=chunk.embedding,
            )
            for chunk in chunks
        ]
        self.session.add_all(chunk_rows)
        self.session.flush()
        for row in chunk_rows:
            chunk_ids[row.ordinal] = row.id
        self.session.add_all(
            Link(
                source_version_id=version.id,
                from_source_id=source_id,
                from_chunk_id=chunk_ids.get(link.from_ordinal) if link.from_ordinal is not None else None,
                link_type=link.link_type,
                target=link.target,
                target_source_id=link.target_source_id,
                anchor=link.anchor,
                is_current=True,
            )
            for link in links
        )
        source.current_version_id = version.id
        source.deleted_at = None
        self._chunks_changed = True
        return version.id

    def touch_source_version(self, source_id: str, observed_at: datetime | None = None) -> None:
        """Record that the current version was observed again unchanged."""
        self.session.execute(
            update(SourceVersion)
            .where(SourceVersion.source_id == source_id, SourceVersion.is_current)
            .values(observed_at=observed_at or now_utc())
        )

    def mark_source_deleted(self, source_id: str) -> None:
        source = self.session.get(Source, source_id)
        if source is None or source.deleted_at is not None:
            return
        self._retire_current(source_id)
        source.current_version_id = None
        source.deleted_at = now_utc()
        self._chunks_changed = True

    def _retire_current(self, source_id: str) -> None:
        current_ids = select(SourceVersion.id).where(
            SourceVersion.source_id == source_id, SourceVersion.is_current
        )
        self.session.execute(
            update(Chunk).where(Chunk.source_version_id.in_(current_ids)).values(is_current=False),
            execution_options={"synchronize_session": False},
        )
        self.session.execute(
            update(Link).where(Link.source_version_id.in_(current_ids)).values(is_current=False),
            execution_options={"synchronize_session": False},
        )
        self.session.execute(
            update(SourceVersion)
            .where(SourceVersion.source_id == source_id, SourceVersion.is_current)
            .values(is_current=False),
            execution_options={"synchronize_session": False},
        )

    def resolve_link_targets(self, root_alias: str, path_to_source: Mapping[str, str]) -> None:
        """Fill ``target_source_id`` of current links whose target names a known path."""
        links = self.session.scalars(
            select(Link)
            .join(Source, Link.from_source_id == Source.source_id)
            .where(Link.is_current, Source.root_alias == root_alias)
        ).all()
        for link in links:
            resolved = path_to_source.get(link.target)
            if link.target_source_id != resolved:
                link.target_source_id = resolved

    def register_corpus_file(self, root_alias: str, path: str) -> None:
        """Record the file a corpus root is ingested from (replacing an earlier one)."""
        record = self.session.get(CorpusFile, root_alias)
        if record is None:
            self.session.add(CorpusFile(root_alias=root_alias, path=path, registered_at=now_utc()))
        elif record.path != path:
            record.path = path
            record.registered_at = now_utc()

    def bump_chunk_generation(self) -> None:
        meta = self.session.get(StoreMeta, CHUNK_GENERATION)
        if meta is None:
            self.session.add(StoreMeta(key=CHUNK_GENERATION, value=1))
        else:
            meta.value = meta.value + 1

    # ---- evidence and audit records -----------------------------------------------------

    def save_rows(self, rows: Iterable[Mapping[str, Any] | JsonDocument]) -> None:
        """Insert or replace evidence rows by ``evidenceId`` (current state plus full JSON)."""
        stamp = now_utc()
        for record in rows:
            document = document_of(record)
            evidence_id = document.get("evidenceId")
            if not isinstance(evidence_id, str) or not evidence_id:
                raise StoreError("evidence row without evidenceId")
            source = document.get("source") or {}
            verification = document.get("verification") or {}
            retrieval = document.get("retrieval") or {}
            existing = self.session.get(EvidenceRowRecord, evidence_id)
            values = {
                "source_id": str(source.get("sourceId", "")),
                "source_revision": (source.get("version") or {}).get("revision"),
                "source_checksum": (source.get("version") or {}).get("checksum"),
                "state": str(verification.get("state", "candidate")),
                "lane": retrieval.get("lane"),
                "row_json": document,
                "updated_at": stamp,
            }
            if existing is None:
                self.session.add(EvidenceRowRecord(evidence_id=evidence_id, created_at=stamp, **values))
            else:
                for key, value in values.items():
                    setattr(existing, key, value)
        self.session.flush()

    def record_verification_event(
        self,
        *,
        evidence_id: str,
        from_state: str | None,
        to_state: str,
        actor: str,
        reason: str,
        packet_id: str | None = None,
        detail: Mapping[str, Any] | None = None,
        at: datetime | None = None,
    ) -> None:
        self.session.add(
            VerificationEvent(
                evidence_id=evidence_id,
                from_state=from_state,
                to_state=to_state,
                actor=actor,
                reason=reason,
                packet_id=packet_id,
                detail=dict(detail or {}),
                at=at or now_utc(),
            )
        )

    def record_lane_run(
        self,
        *,
        result_set_id: str,
        lane: str,
        query: str,
        status: str,
        parameters: Mapping[str, Any],
        candidate_count: int | None = None,
        latency_ms: float | None = None,
        skip_reason: str | None = None,
        error: str | None = None,
        packet_id: str | None = None,
    ) -> None:
        self.session.add(
            LaneRun(
                result_set_id=result_set_id,
                packet_id=packet_id,
                lane=lane,
                query=query,
                status=status,
                parameters=dict(parameters),
                candidate_count=candidate_count,
                latency_ms=latency_ms,
                skip_reason=skip_reason,
                error=error,
                at=now_utc(),
            )
        )

    def record_rejections(self, rejections: Iterable[Rejection]) -> None:
        self.session.add_all(
            RejectedCandidate(
                stage=rejection.stage,
                reason=rejection.reason,
                query=rejection.query,
                result_set_id=rejection.result_set_id,
                packet_id=rejection.packet_id,
                source_id=rejection.source_id,
                evidence_id=rejection.evidence_id,
                detail=dict(rejection.detail),
                at=rejection.at or now_utc(),
            )
            for rejection in rejections
        )

    def save_packet(self, packet: Mapping[str, Any] | JsonDocument) -> str:
        """Insert or replace a packet with its claims and claim support (from the packet JSON)."""
        document = document_of(packet)
        packet_id = document.get("packetId")
        if not isinstance(packet_id, str) or not packet_id:
            raise StoreError("packet without packetId")
        query = document.get("query") or {}
        project = document.get("project") or {}
        verification = document.get("verification") or {}
        generated = document.get("generatedAt")
        generated_at = datetime.fromisoformat(generated) if isinstance(generated, str) else now_utc()
        checksum = project.get("manifestChecksum")
        if isinstance(checksum, dict):
            checksum = checksum.get("value")
        values: dict[str, Any] = {
            "task_id": str(document.get("taskId", "")),
            "query": str(query.get("original", "")) if isinstance(query, dict) else str(query),
            "verdict": str(verification.get("verdict", "NOT_TESTED")),
            "manifest_id": project.get("manifestId"),
            "manifest_checksum": checksum,
            "packet_json": document,
            "generated_at": generated_at,
        }
        existing = self.session.get(PacketRecord, packet_id)
        if existing is None:
            self.session.add(PacketRecord(packet_id=packet_id, **values))
        else:
            # A re-saved packet replaces its claims; decode stats and events stay (append-only).
            self.session.query(ClaimSupport).filter(ClaimSupport.packet_id == packet_id).delete()
            self.session.query(ClaimRecord).filter(ClaimRecord.packet_id == packet_id).delete()
            for key, value in values.items():
                setattr(existing, key, value)
        self.session.flush()
        for claim in document.get("claims") or []:
            claim_id = str(claim.get("claimId", ""))
            self.session.add(
                ClaimRecord(
                    packet_id=packet_id,
                    claim_id=claim_id,
                    claim_text=str(claim.get("claimText", "")),
                    claim_class=str(claim.get("claimClass", "other")),
                    importance=str(claim.get("importance", "supporting")),
                    status=str(claim.get("status", "unsupported")),
                    claim_json=dict(claim),
                )
            )
            for evidence_id in dict.fromkeys(claim.get("supportRowIds") or []):
                self.session.add(
                    ClaimSupport(
                        packet_id=packet_id,
                        claim_id=claim_id,
                        evidence_id=str(evidence_id),
                        label=None,
                        note=None,
                        detail={},
                    )
                )
        self.session.flush()
        return packet_id

    def record_claim_support(
        self,
        *,
        packet_id: str,
        claim_id: str,
        evidence_id: str,
        label: str | None,
        note: str | None = None,
        detail: Mapping[str, Any] | None = None,
    ) -> None:
        """Set the verifier's judgement for one claim↔row pair (insert or update)."""
        existing = self.session.scalar(
            select(ClaimSupport).where(
                ClaimSupport.packet_id == packet_id,
                ClaimSupport.claim_id == claim_id,
                ClaimSupport.evidence_id == evidence_id,
            )
        )
        if existing is None:
            self.session.add(
                ClaimSupport(
                    packet_id=packet_id,
                    claim_id=claim_id,
                    evidence_id=evidence_id,
                    label=label,
                    note=note,
                    detail=dict(detail or {}),
                )
            )
        else:
            existing.label = label
            existing.note = note
            existing.detail = dict(detail or {})

    def save_decode_stats(self, packet_id: str, stats: Mapping[str, Any]) -> None:
        self.session.add(DecodeStatsRecord(packet_id=packet_id, stats_json=dict(stats), at=now_utc()))


def _source_states(
    session: Session, root_alias: str, source_ids: Sequence[str] | None = None
) -> dict[str, SourceState]:
    query = (
        select(
            Source.source_id,
            Source.path,
            Source.current_version_id,
            Source.deleted_at,
            SourceVersion.sha256,
            SourceVersion.revision,
        )
        .outerjoin(SourceVersion, SourceVersion.id == Source.current_version_id)
        .where(Source.root_alias == root_alias)
    )
    if source_ids is not None:
        query = query.where(Source.source_id.in_(list(source_ids)))
    rows = session.execute(query)
    return {
        row[0]: SourceState(
            source_id=row[0],
            path=row[1],
            current_version_id=row[2],
            sha256=row[4],
            revision=row[5],
            deleted=row[3] is not None,
        )
        for row in rows
    }


@dataclass
class _VectorCache:
    generation: int = -1
    ids: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    matrix: Vector = field(
        default_factory=lambda: np.zeros((0, dialects.EMBEDDING_DIMENSIONS), dtype=np.float32)
    )


_BLAS_LOCK = threading.Lock()
_blas: dict[str, Any] = {}


@contextmanager
def _one_blas_thread() -> Iterator[None]:
    """Run the enclosed BLAS call on one thread, restoring the previous setting after.

    One matrix-vector product over the stored vectors is too small to split, and idle
    OpenBLAS workers spin afterwards: on two busy cores the product took about 10 ms with
    two threads against under 1 ms with one, and the spinning slowed the other lanes too.
    Without threadpoolctl the product runs as configured.
    """
    with _BLAS_LOCK:
        if "controller" not in _blas:
            try:
                from threadpoolctl import ThreadpoolController
            except ImportError:
                _blas["controller"] = None
            else:
                _blas["controller"] = ThreadpoolController()
        controller = _blas["controller"]
        if controller is None:
            yield
            return
        with controller.limit(limits=1, user_api="blas"):
            yield


@dataclass
class _TextCache:
    generation: int = -1
    ids: list[int] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)
    haystack: str = ""


class EvidenceStore:
    """Repository over one database (SQLite file or PostgreSQL)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.dialect_name = engine.dialect.name
        self._vectors = _VectorCache()
        self._vector_lock = threading.Lock()
        self._texts = _TextCache()
        self._text_lock = threading.Lock()

    @property
    def lexical_score_meaning(self) -> str:
        return dialects.lexical_score_meaning(self.dialect_name)

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def transaction(self) -> Iterator[StoreTransaction]:
        """One write transaction under the store's write lock; rolled back on any exception."""
        with Session(self.engine, expire_on_commit=False) as session:
            session.connection(execution_options={"sqlite_begin": "IMMEDIATE"})
            dialects.acquire_write_lock(session.connection())
            tx = StoreTransaction(session)
            try:
                yield tx
                if tx._chunks_changed:
                    tx.bump_chunk_generation()
                session.commit()
            except BaseException:
                session.rollback()
                raise

    @contextmanager
    def _reading(self) -> Iterator[Session]:
        with Session(self.engine) as session:
            yield session

    # ---- sources and chunks -------------------------------------------------------------

    def source_states(self, root_alias: str) -> dict[str, SourceState]:
        with self._reading() as session:
            return _source_states(session, root_alias)

    def source_versions(self, source_id: str) -> list[SourceVersionInfo]:
        """Every version of a source, oldest first."""
        with self._reading() as session:
            versions = session.scalars(
                select(SourceVersion).where(SourceVersion.source_id == source_id).order_by(SourceVersion.id)
            ).all()
            return [
                SourceVersionInfo(
                    version_id=version.id,
                    source_id=version.source_id,
                    revision=version.revision,
                    sha256=version.sha256,
                    path=version.path,
                    observed_at=_as_utc(version.observed_at) or now_utc(),
                    is_current=version.is_current,
                )
                for version in versions
            ]

    def get_chunk(self, chunk_id: int) -> StoredChunk | None:
        chunks = self.get_chunks([chunk_id])
        return chunks[0] if chunks else None

    def get_chunks(self, chunk_ids: Sequence[int]) -> list[StoredChunk]:
        """Chunks by id, in the order asked (unknown ids are left out)."""
        if not chunk_ids:
            return []
        # A Core connection: these are plain column rows, and the ORM session's statement
        # handling cost more than the query on the retrieval path.
        with self.engine.connect() as connection:
            rows = connection.execute(_chunk_columns().where(Chunk.id.in_(list(chunk_ids)))).all()
        by_id = {row[0]: _stored_chunk(row) for row in rows}
        return [by_id[chunk_id] for chunk_id in chunk_ids if chunk_id in by_id]

    def chunks_of_source(self, source_id: str, *, current_only: bool = True) -> list[StoredChunk]:
        query = _chunk_columns().where(Chunk.source_id == source_id)
        if current_only:
            query = query.where(Chunk.is_current)
        with self.engine.connect() as connection:
            rows = connection.execute(query.order_by(Chunk.source_version_id, Chunk.ordinal)).all()
        return [_stored_chunk(row) for row in rows]

    def count_current_chunks(self) -> int:
        with self._reading() as session:
            return int(session.scalar(select(func.count()).select_from(Chunk).where(Chunk.is_current)) or 0)

    def neighbours(self, chunk_id: int, *, before: int = 1, after: int = 1) -> list[StoredChunk]:
        """The chunk with up to ``before``/``after`` adjacent chunks of the same source version, in order."""
        with self._reading() as session:
            anchor = session.execute(
                select(Chunk.source_version_id, Chunk.ordinal).where(Chunk.id == chunk_id)
            ).first()
            if anchor is None:
                return []
            rows = session.execute(
                _chunk_columns()
                .where(
                    Chunk.source_version_id == anchor[0],
                    Chunk.ordinal >= anchor[1] - before,
                    Chunk.ordinal <= anchor[1] + after,
                )
                .order_by(Chunk.ordinal)
            ).all()
        return [_stored_chunk(row) for row in rows]

    def links_from(self, source_id: str) -> list[LinkEdge]:
        return self.links_from_sources([source_id])[source_id]

    def links_to(self, source_id: str) -> list[LinkEdge]:
        return self.links_to_sources([source_id])[source_id]

    def linked_source_ids(self, source_id: str) -> list[str]:
        """Sources one current link away (either direction), sorted."""
        neighbours = {edge.target_source_id for edge in self.links_from(source_id) if edge.target_source_id}
        neighbours |= {edge.from_source_id for edge in self.links_to(source_id)}
        neighbours.discard(source_id)
        return sorted(neighbours)

    def links_from_sources(self, source_ids: Sequence[str]) -> dict[str, list[LinkEdge]]:
        """Current links out of each source, in one query; by source id in the order asked."""
        return self._links_by(Link.from_source_id, source_ids)

    def links_to_sources(self, source_ids: Sequence[str]) -> dict[str, list[LinkEdge]]:
        """Current links into each source, in one query; by source id in the order asked."""
        return self._links_by(Link.target_source_id, source_ids)

    def _links_by(self, column: Any, source_ids: Sequence[str]) -> dict[str, list[LinkEdge]]:
        by_source: dict[str, list[LinkEdge]] = {source_id: [] for source_id in source_ids}
        if not source_ids:
            return by_source
        # A Core connection: plain column rows cost less than ORM objects on the retrieval path.
        query = (
            select(
                Link.from_source_id,
                Link.from_chunk_id,
                Link.link_type,
                Link.target,
                Link.target_source_id,
                Link.anchor,
                column,
            )
            .where(column.in_(list(source_ids)), Link.is_current)
            .order_by(Link.id)
        )
        with self.engine.connect() as connection:
            for row in connection.execute(query):
                by_source[row[6]].append(LinkEdge(*row[:6]))
        return by_source

    def find_sources(self, term: str, *, limit: int = 20) -> list[str]:
        """Current source ids whose path, title, source id or external id contains ``term`` (case-insensitive).

        Case folding is ASCII-only on both backends: SQLite's LIKE (and its lower()) fold ASCII
        only, so SQLite compares without lower(), which lets it skip four function calls a row.
        """
        pattern = f"%{term.lower()}%"
        columns = (
            Source.path,
            func.coalesce(Source.title, ""),
            Source.source_id,
            func.coalesce(Source.external_id, ""),
        )
        if self.dialect_name == "sqlite":
            matches = [column.like(pattern) for column in columns]
        else:
            matches = [func.lower(column).like(pattern) for column in columns]
        query = (
            select(Source.source_id)
            .where(Source.deleted_at.is_(None), or_(*matches))
            .order_by(Source.source_id)
            .limit(limit)
        )
        with self.engine.connect() as connection:
            return [str(row[0]) for row in connection.execute(query)]

    def chunks_of_sources(self, source_ids: Sequence[str]) -> dict[str, list[StoredChunk]]:
        """Current chunks of each source in one query, by source id in the order asked, chunks in order."""
        if not source_ids:
            return {}
        query = (
            _chunk_columns()
            .where(Chunk.source_id.in_(list(source_ids)), Chunk.is_current)
            .order_by(Chunk.source_version_id, Chunk.ordinal)
        )
        with self.engine.connect() as connection:
            rows = connection.execute(query).all()
        by_source: dict[str, list[StoredChunk]] = {source_id: [] for source_id in source_ids}
        for row in rows:
            chunk = _stored_chunk(row)
            by_source[chunk.source_id].append(chunk)
        return by_source

    def chunks_containing(self, literal: str, *, limit: int = 20) -> list[StoredChunk]:
        """Current chunks whose text contains ``literal`` exactly (case-sensitive), in storage order."""
        if not literal:
            return []
        if self.dialect_name == "sqlite" and limit >= 0 and "\x00" not in literal:
            return self.get_chunks(self._current_ids_containing(literal, limit))
        with self._reading() as session:
            ids = (
                session.scalars(
                    select(Chunk.id)
                    .where(Chunk.is_current, func.instr(Chunk.text, literal) > 0)
                    .order_by(Chunk.id)
                    .limit(limit)
                ).all()
                if self.dialect_name == "sqlite"
                else session.scalars(
                    select(Chunk.id)
                    .where(Chunk.is_current, func.strpos(Chunk.text, literal) > 0)
                    .order_by(Chunk.id)
                    .limit(limit)
                ).all()
            )
        return self.get_chunks(list(ids))

    def _current_ids_containing(self, literal: str, limit: int) -> list[int]:
        """Ids of current chunks whose text contains ``literal``, in id order, from memory.

        A substring test cannot use the FTS index, and scanning the chunks table reads every
        row's text and embedding pages. The current texts are kept joined by NUL (which the
        literal does not contain, so no match spans two chunks) and reloaded when the chunk
        generation changes, like the vector cache.
        """
        generation = self._chunk_generation()
        with self._text_lock:
            if generation != self._texts.generation:
                with self.engine.connect() as connection:
                    rows = connection.execute(
                        select(Chunk.id, Chunk.text).where(Chunk.is_current).order_by(Chunk.id)
                    ).all()
                starts: list[int] = []
                offset = 0
                for row in rows:
                    starts.append(offset)
                    offset += len(row[1]) + 1
                self._texts = _TextCache(
                    generation=generation,
                    ids=[int(row[0]) for row in rows],
                    starts=starts,
                    haystack="\x00".join(row[1] for row in rows),
                )
            cache = self._texts
        found: list[int] = []
        position = 0
        while len(found) < limit:
            at = cache.haystack.find(literal, position)
            if at < 0:
                break
            index = bisect.bisect_right(cache.starts, at) - 1
            found.append(cache.ids[index])
            if index + 1 >= len(cache.starts):
                break
            position = cache.starts[index + 1]
        return found

    def lexical_search(self, query: str, limit: int) -> list[tuple[StoredChunk, float]]:
        """Current chunks matching any query term, best first, with the backend-local lexical score."""
        with self.engine.connect() as connection:
            hits = dialects.lexical_search_ids(connection, query, limit)
        chunks = {chunk.chunk_id: chunk for chunk in self.get_chunks([chunk_id for chunk_id, _ in hits])}
        return [(chunks[chunk_id], score) for chunk_id, score in hits if chunk_id in chunks]

    def vector_search(self, vector: Sequence[float] | Vector, limit: int) -> list[tuple[StoredChunk, float]]:
        """Current chunks nearest to ``vector`` by cosine similarity, best first."""
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        if limit <= 0 or not np.any(query):
            return []
        if self.dialect_name == "postgresql":
            with self.engine.connect() as connection:
                hits = dialects.pg_vector_search_ids(connection, query.tolist(), limit)
        else:
            hits = self._numpy_vector_search(query, limit)
        chunks = {chunk.chunk_id: chunk for chunk in self.get_chunks([chunk_id for chunk_id, _ in hits])}
        return [(chunks[chunk_id], score) for chunk_id, score in hits if chunk_id in chunks]

    def _chunk_generation(self) -> int:
        with self._reading() as session:
            value = session.scalar(select(StoreMeta.value).where(StoreMeta.key == CHUNK_GENERATION))
        return int(value or 0)

    def _numpy_vector_search(self, query: Vector, limit: int) -> list[tuple[int, float]]:
        generation = self._chunk_generation()
        with self._vector_lock:
            if generation != self._vectors.generation:
                with self.engine.connect() as connection:
                    rows = connection.execute(
                        select(Chunk.id, Chunk.embedding)
                        .where(Chunk.is_current, Chunk.embedding.is_not(None))
                        .order_by(Chunk.id)
                    ).all()
                ids = np.array([row[0] for row in rows], dtype=np.int64)
                if rows:
                    matrix = np.stack([np.asarray(row[1], dtype=np.float32) for row in rows])
                    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
                    matrix = (matrix / np.where(norms == 0, 1, norms)).astype(np.float32)
                else:
                    matrix = np.zeros((0, dialects.EMBEDDING_DIMENSIONS), dtype=np.float32)
                self._vectors = _VectorCache(generation=generation, ids=ids, matrix=matrix)
            cache = self._vectors
        if cache.ids.size == 0:
            return []
        with _one_blas_thread():
            scores = cache.matrix @ (query / np.linalg.norm(query))
        count = min(limit, scores.shape[0])
        top = np.argpartition(-scores, count - 1)[:count]
        # Ties broken by chunk id so results are reproducible.
        order = sorted(top.tolist(), key=lambda index: (-float(scores[index]), int(cache.ids[index])))
        return [(int(cache.ids[index]), float(scores[index])) for index in order]

    def embeddings_for_excerpts(self, excerpt_sha256s: Iterable[str]) -> dict[str, Vector]:
        """Stored embeddings of any chunk with these excerpt checksums (the embedding cache)."""
        wanted = list(dict.fromkeys(excerpt_sha256s))
        found: dict[str, Vector] = {}
        with self._reading() as session:
            for start in range(0, len(wanted), 500):
                batch = wanted[start : start + 500]
                rows = session.execute(
                    select(Chunk.excerpt_sha256, Chunk.embedding).where(
                        and_(Chunk.excerpt_sha256.in_(batch), Chunk.embedding.is_not(None))
                    )
                )
                for sha, embedding in rows:
                    if embedding is not None:
                        found.setdefault(sha, embedding)
        return found

    # ---- evidence, packets and audits ---------------------------------------------------

    def save_rows(self, rows: Iterable[Mapping[str, Any] | JsonDocument]) -> None:
        with self.transaction() as tx:
            tx.save_rows(rows)

    def get_row(self, evidence_id: str) -> dict[str, Any] | None:
        with self._reading() as session:
            record = session.get(EvidenceRowRecord, evidence_id)
            return dict(record.row_json) if record is not None else None

    def rows_for_source(self, source_id: str, *, state: str | None = None) -> list[dict[str, Any]]:
        query = select(EvidenceRowRecord.row_json).where(EvidenceRowRecord.source_id == source_id)
        if state is not None:
            query = query.where(EvidenceRowRecord.state == state)
        with self._reading() as session:
            return [dict(row) for row in session.scalars(query.order_by(EvidenceRowRecord.evidence_id))]

    def record_verification_event(self, **event: Any) -> None:
        with self.transaction() as tx:
            tx.record_verification_event(**event)

    def verification_events(self, evidence_id: str) -> list[VerificationEventRecord]:
        with self._reading() as session:
            events = session.scalars(
                select(VerificationEvent)
                .where(VerificationEvent.evidence_id == evidence_id)
                .order_by(VerificationEvent.id)
            ).all()
            return [
                VerificationEventRecord(
                    id=event.id,
                    evidence_id=event.evidence_id,
                    from_state=event.from_state,
                    to_state=event.to_state,
                    actor=event.actor,
                    reason=event.reason,
                    packet_id=event.packet_id,
                    detail=dict(event.detail),
                    at=_as_utc(event.at) or now_utc(),
                )
                for event in events
            ]

    def record_lane_run(self, **lane_run: Any) -> None:
        with self.transaction() as tx:
            tx.record_lane_run(**lane_run)

    def record_rejection(self, rejection: Rejection) -> None:
        with self.transaction() as tx:
            tx.record_rejections([rejection])

    def list_rejections(
        self,
        *,
        reason: str | None = None,
        source: str | None = None,
        stage: str | None = None,
        packet_id: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[RejectionRecord]:
        """Rejected candidates, newest first, filtered by any of the given fields."""
        query = select(RejectedCandidate)
        if reason is not None:
            query = query.where(RejectedCandidate.reason == reason)
        if source is not None:
            query = query.where(RejectedCandidate.source_id == source)
        if stage is not None:
            query = query.where(RejectedCandidate.stage == stage)
        if packet_id is not None:
            query = query.where(RejectedCandidate.packet_id == packet_id)
        if since is not None:
            query = query.where(RejectedCandidate.at >= since)
        if until is not None:
            query = query.where(RejectedCandidate.at < until)
        query = (
            query.order_by(RejectedCandidate.at.desc(), RejectedCandidate.id.desc())
            .limit(limit)
            .offset(offset)
        )
        with self._reading() as session:
            return [
                RejectionRecord(
                    id=record.id,
                    stage=record.stage,
                    reason=record.reason,
                    query=record.query,
                    result_set_id=record.result_set_id,
                    packet_id=record.packet_id,
                    source_id=record.source_id,
                    evidence_id=record.evidence_id,
                    detail=dict(record.detail),
                    at=_as_utc(record.at) or now_utc(),
                )
                for record in session.scalars(query)
            ]

    def save_packet(
        self,
        packet: Mapping[str, Any] | JsonDocument,
        *,
        rejections: Iterable[Rejection] = (),
        decode_stats: Mapping[str, Any] | None = None,
    ) -> str:
        """Store a packet, its evidence rows, claims, claim support, rejections and decode stats atomically."""
        document = document_of(packet)
        with self.transaction() as tx:
            tx.save_rows(document.get("evidenceRows") or [])
            packet_id = tx.save_packet(document)
            tx.record_rejections(rejections)
            if decode_stats is not None:
                tx.save_decode_stats(packet_id, decode_stats)
        return packet_id

    def get_packet(self, packet_id: str) -> dict[str, Any] | None:
        with self._reading() as session:
            record = session.get(PacketRecord, packet_id)
            return dict(record.packet_json) if record is not None else None

    def packets_citing(self, evidence_ids: Iterable[str]) -> list[str]:
        """Packet ids whose claims list any of these evidence rows as support."""
        wanted = list(evidence_ids)
        if not wanted:
            return []
        with self._reading() as session:
            return sorted(
                set(
                    session.scalars(
                        select(ClaimSupport.packet_id).where(ClaimSupport.evidence_id.in_(wanted))
                    )
                )
            )

    def decode_stats(self, packet_id: str) -> list[dict[str, Any]]:
        with self._reading() as session:
            return [
                dict(stats)
                for stats in session.scalars(
                    select(DecodeStatsRecord.stats_json)
                    .where(DecodeStatsRecord.packet_id == packet_id)
                    .order_by(DecodeStatsRecord.id)
                )
            ]

    # ---- audit queries (REST API) -------------------------------------------------------

    def corpus_files(self) -> dict[str, str]:
        """The file each corpus root was ingested from, by root alias."""
        with self._reading() as session:
            return {record.root_alias: record.path for record in session.scalars(select(CorpusFile))}

    def source_page(self, *, after: str | None = None, limit: int = 100) -> list[SourceInfo]:
        """Sources ordered by id, starting after ``after`` (keyset pagination)."""
        query = select(Source).order_by(Source.source_id).limit(limit)
        if after is not None:
            query = query.where(Source.source_id > after)
        with self._reading() as session:
            return [_source_info(session, source) for source in session.scalars(query)]

    def get_source(self, source_id: str) -> SourceInfo | None:
        with self._reading() as session:
            source = session.get(Source, source_id)
            return _source_info(session, source) if source is not None else None

    def last_direct_read_at(self, source_id: str) -> datetime | None:
        """When any evidence row of ``source_id`` last entered the direct-read state."""
        with self._reading() as session:
            value = session.scalar(
                select(func.max(VerificationEvent.at))
                .join(EvidenceRowRecord, EvidenceRowRecord.evidence_id == VerificationEvent.evidence_id)
                .where(EvidenceRowRecord.source_id == source_id, VerificationEvent.to_state == "direct-read")
            )
        return _as_utc(value)

    def verification_events_of_packet(self, packet_id: str) -> list[VerificationEventRecord]:
        """Every verification event recorded for ``packet_id``, in order."""
        with self._reading() as session:
            events = session.scalars(
                select(VerificationEvent)
                .where(VerificationEvent.packet_id == packet_id)
                .order_by(VerificationEvent.id)
            ).all()
            return [_event_record(event) for event in events]

    def claim_records(self, claim_id: str) -> list[ClaimInfo]:
        """Every stored occurrence of ``claim_id`` (one per packet) with its support rows."""
        with self._reading() as session:
            claims = session.scalars(
                select(ClaimRecord).where(ClaimRecord.claim_id == claim_id).order_by(ClaimRecord.id)
            ).all()
            return [
                ClaimInfo(
                    packet_id=claim.packet_id,
                    claim_id=claim.claim_id,
                    status=claim.status,
                    claim=dict(claim.claim_json),
                    support=_support_of(
                        session, ClaimSupport.packet_id == claim.packet_id, ClaimSupport.claim_id == claim_id
                    ),
                )
                for claim in claims
            ]

    def claim_support_of_rows(self, evidence_ids: Iterable[str]) -> list[ClaimSupportRecord]:
        """Claim↔row links that name any of these evidence rows."""
        wanted = list(dict.fromkeys(evidence_ids))
        found: list[ClaimSupportRecord] = []
        with self._reading() as session:
            for start in range(0, len(wanted), 500):
                found.extend(_support_of(session, ClaimSupport.evidence_id.in_(wanted[start : start + 500])))
        return found

    def packet_verdicts(self, packet_ids: Iterable[str]) -> dict[str, str]:
        """The stored verdict of each known packet id."""
        wanted = list(dict.fromkeys(packet_ids))
        if not wanted:
            return {}
        with self._reading() as session:
            rows = session.execute(
                select(PacketRecord.packet_id, PacketRecord.verdict).where(PacketRecord.packet_id.in_(wanted))
            ).all()
        return {row[0]: row[1] for row in rows}

    def count_packets(self) -> int:
        with self._reading() as session:
            return int(session.scalar(select(func.count()).select_from(PacketRecord)) or 0)

    # ---- re-verification dependencies -------------------------------------------------------

    def dependents_of_source(self, source_id: str, revision: str | None = None) -> list[SourceDependent]:
        """Packets and claims that rely on rows of ``source_id`` (read at ``revision`` when given)."""
        query = (
            select(
                ClaimSupport.packet_id,
                PacketRecord.task_id,
                ClaimSupport.claim_id,
                ClaimSupport.evidence_id,
                EvidenceRowRecord.source_revision,
                ClaimSupport.label,
            )
            .join(EvidenceRowRecord, EvidenceRowRecord.evidence_id == ClaimSupport.evidence_id)
            .join(PacketRecord, PacketRecord.packet_id == ClaimSupport.packet_id)
            .where(EvidenceRowRecord.source_id == source_id)
        )
        if revision is not None:
            query = query.where(EvidenceRowRecord.source_revision == revision)
        with self._reading() as session:
            rows = session.execute(query.order_by(ClaimSupport.id)).all()
        return [
            SourceDependent(
                packet_id=row[0],
                task_id=row[1],
                claim_id=row[2],
                evidence_id=row[3],
                revision=row[4],
                label=row[5],
            )
            for row in rows
        ]

    def sources_awaiting_reverification(self) -> list[str]:
        """Sources with rows still live although the source changed or disappeared since they were read.

        Re-verifying a source makes each such row stale or rejected in the same transaction
        that appends the re-verified packets, so this list is what is left to do after an
        interrupted or failed re-verification; the next ingest or ``akm reverify`` picks it up.
        """
        current = SourceVersion.__table__.alias("current_version")
        query = (
            select(EvidenceRowRecord.source_id)
            .join(Source, Source.source_id == EvidenceRowRecord.source_id)
            .outerjoin(current, current.c.id == Source.current_version_id)
            .where(
                EvidenceRowRecord.state.not_in(_TERMINAL_ROW_STATES),
                EvidenceRowRecord.source_checksum.is_not(None),
                or_(
                    Source.deleted_at.is_not(None),
                    current.c.id.is_(None),
                    current.c.sha256 != EvidenceRowRecord.source_checksum,
                ),
            )
            .distinct()
            .order_by(EvidenceRowRecord.source_id)
        )
        with self._reading() as session:
            return list(session.scalars(query))

    def packets_of_task(self, task_id: str) -> list[str]:
        """Packet ids of one task, oldest first (a re-verification appends a packet to its task)."""
        with self._reading() as session:
            return list(
                session.scalars(
                    select(PacketRecord.packet_id)
                    .where(PacketRecord.task_id == task_id)
                    .order_by(PacketRecord.generated_at, PacketRecord.packet_id)
                )
            )


@dataclass(frozen=True)
class SourceInfo:
    """A source with all its versions (oldest first)."""

    source_id: str
    root_alias: str
    path: str
    canonical_uri: str
    source_type: str
    classification: str
    title: str | None
    external_id: str | None
    first_seen_at: datetime
    deleted_at: datetime | None
    versions: tuple[SourceVersionInfo, ...]


@dataclass(frozen=True)
class SourceDependent:
    """One claim of one packet relying on a row of a source revision."""

    packet_id: str
    task_id: str
    claim_id: str
    evidence_id: str
    revision: str | None
    label: str | None


@dataclass(frozen=True)
class ClaimSupportRecord:
    packet_id: str
    claim_id: str
    evidence_id: str
    label: str | None
    note: str | None


@dataclass(frozen=True)
class ClaimInfo:
    packet_id: str
    claim_id: str
    status: str
    claim: dict[str, Any]
    support: list[ClaimSupportRecord]


def _source_info(session: Session, source: Source) -> SourceInfo:
    versions = session.scalars(
        select(SourceVersion).where(SourceVersion.source_id == source.source_id).order_by(SourceVersion.id)
    ).all()
    return SourceInfo(
        source_id=source.source_id,
        root_alias=source.root_alias,
        path=source.path,
        canonical_uri=source.canonical_uri,
        source_type=source.source_type,
        classification=source.classification,
        title=source.title,
        external_id=source.external_id,
        first_seen_at=_as_utc(source.first_seen_at) or now_utc(),
        deleted_at=_as_utc(source.deleted_at),
        versions=tuple(
            SourceVersionInfo(
                version_id=version.id,
                source_id=version.source_id,
                revision=version.revision,
                sha256=version.sha256,
                path=version.path,
                observed_at=_as_utc(version.observed_at) or now_utc(),
                is_current=version.is_current,
            )
            for version in versions
        ),
    )


def _support_of(session: Session, *conditions: Any) -> list[ClaimSupportRecord]:
    return [
        ClaimSupportRecord(
            packet_id=support.packet_id,
            claim_id=support.claim_id,
            evidence_id=support.evidence_id,
            label=support.label,
            note=support.note,
        )
        for support in session.scalars(select(ClaimSupport).where(*conditions).order_by(ClaimSupport.id))
    ]


def _event_record(event: VerificationEvent) -> VerificationEventRecord:
    return VerificationEventRecord(
        id=event.id,
        evidence_id=event.evidence_id,
        from_state=event.from_state,
        to_state=event.to_state,
        actor=event.actor,
        reason=event.reason,
        packet_id=event.packet_id,
        detail=dict(event.detail),
        at=_as_utc(event.at) or now_utc(),
    )


def normalise_database_url(database_url: str) -> str:
    """Use the psycopg 3 driver for plain ``postgresql://`` URLs."""
    for prefix in ("postgresql://", "postgres://"):
        if database_url.startswith(prefix):
            return "postgresql+psycopg://" + database_url[len(prefix) :]
    return database_url


def create_store_engine(database_url: str) -> Engine:
    url = normalise_database_url(database_url)
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"timeout": 60, "check_same_thread": False})
        dialects.configure_sqlite_engine(engine)
        return engine
    return create_engine(url, pool_pre_ping=True)


def open_store(database_url: str, *, migrate_to_head: bool = True) -> EvidenceStore:
    """Open (creating if needed) the store at ``database_url``, migrated to the head revision."""
    if database_url.startswith("sqlite:///") and not database_url.startswith("sqlite:///:memory:"):
        from pathlib import Path

        Path(database_url[len("sqlite:///") :]).expanduser().parent.mkdir(parents=True, exist_ok=True)
    engine = create_store_engine(database_url)
    if migrate_to_head:
        migrate.upgrade(engine)
    return EvidenceStore(engine)
