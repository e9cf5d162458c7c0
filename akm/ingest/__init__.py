"""Ingest canonical sources into the evidence store (see ``akm.ingest.pipeline``)."""

from akm.ingest.pipeline import (
    IngestError,
    IngestProgress,
    IngestReport,
    PreparedSource,
    corpus_alias,
    git_blob_sha,
    ingest,
    ingest_corpus,
)

__all__ = [
    "IngestError",
    "IngestProgress",
    "IngestReport",
    "PreparedSource",
    "corpus_alias",
    "git_blob_sha",
    "ingest",
    "ingest_corpus",
]
