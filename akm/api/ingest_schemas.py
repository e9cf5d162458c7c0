"""Bodies of the upload and ingest-job routes (camelCase on the wire)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel


class _Model(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class UploadedFileOut(_Model):
    name: str = Field(description="the stored file name (NFC)")
    path: str = Field(description="the file's path relative to the manifest's project root")
    source_id: str = Field(description="the source ID the file has once ingested")
    sha256: str
    etag: str = Field(description='entity tag of the stored content, for If-Match: "sha256:<hex>"')
    byte_size: int
    content_type: str
    replaced: bool = Field(description="true when an existing file was replaced (If-Match matched)")


class UploadOut(_Model):
    files: list[UploadedFileOut]


class IngestIn(_Model):
    paths: list[str] | None = Field(
        default=None,
        min_length=1,
        max_length=100,
        description="files or folders relative to the manifest's project root; omit for every root",
    )


class IngestProgressOut(_Model):
    phase: str = Field(description="starting, scan, write or done")
    files_total: int | None = Field(description="files the walk admitted (known once listed)")
    files_seen: int
    files_ingested: int = Field(description="new or changed files written so far")
    files_denied: int = Field(description="files the manifest's rules denied (count only)")
    chunks_written: int
    embeddings_computed: int
    elapsed_seconds: float
    files_per_second: float


class IngestJobOut(_Model):
    job_id: str
    state: Literal["running", "succeeded", "failed", "cancelled", "interrupted"]
    paths: list[str] | None
    created_at: str
    finished_at: str | None
    progress: IngestProgressOut
    report: dict[str, Any] | None = Field(
        description="the ingest report (as `akm ingest --json`, plus missingPaths) once finished"
    )
    reverify: dict[str, Any] | None = Field(
        description="re-verification of what the changed or deleted sources supported"
    )
    error: str | None
