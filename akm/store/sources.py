"""Sources and chunks: source versions, chunks, links and corpus files, written and read.

A source keeps every version it was observed at; only the current version's chunks and links
are current. Writes are ``SourceWrites`` methods of the store transaction; reads are
``SourceReads`` methods of the store.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sqlalchemy import Select, and_, func, or_, select, update
from sqlalchemy.orm import Session

from akm.store.base import StoreError, StoreReads, TransactionWrites, as_utc, now_utc
from akm.store.models import Chunk, CorpusFile, Link, Source, SourceVersion, StoreMeta

CHUNK_GENERATION = "chunk_generation"
Vector = NDArray[np.float32]


def observed_revision(revision: str, observation: int) -> str:
    """The revision label of the ``observation``-th version with the same content (2 and up)."""
    return f"{revision}#{observation}"


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
    # The layout the current version's chunks were cut with (extracted formats only).
    layout: str | None = None


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
    observed = as_utc(row[22])
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
            SourceVersion.layout,
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
            layout=row[6],
        )
        for row in rows
    }


def versions_of(session: Session, source_id: str) -> list[SourceVersionInfo]:
    """Every version of ``source_id``, oldest first."""
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
            observed_at=as_utc(version.observed_at) or now_utc(),
            is_current=version.is_current,
        )
        for version in versions
    ]


class SourceWrites(TransactionWrites):
    """Writes of sources, their versions, chunks and links, and corpus files."""

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
        layout: str | None = None,
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
            layout=layout,
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


class SourceReads(StoreReads):
    """Reads of sources, versions, chunks, links and corpus files."""

    def corpus_files(self) -> dict[str, str]:
        """The file each corpus root was ingested from, by root alias."""
        with self._reading() as session:
            return {record.root_alias: record.path for record in session.scalars(select(CorpusFile))}

    def source_states(self, root_alias: str) -> dict[str, SourceState]:
        with self._reading() as session:
            return _source_states(session, root_alias)

    def source_versions(self, source_id: str) -> list[SourceVersionInfo]:
        """Every version of a source, oldest first."""
        with self._reading() as session:
            return versions_of(session, source_id)

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
