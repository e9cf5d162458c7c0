"""Ingest canonical sources into the evidence store (see ``akm.ingest.pipeline``)."""

from akm.ingest.pipeline import (
    CAP_FIELD,
    CorpusCapPlan,
    IngestError,
    IngestProgress,
    IngestReport,
    PreparedSource,
    corpus_alias,
    corpus_document_count,
    git_blob_sha,
    ingest,
    ingest_corpus,
)

__all__ = [
    "CAP_FIELD",
    "CorpusCapPlan",
    "IngestError",
    "IngestProgress",
    "IngestReport",
    "PreparedSource",
    "corpus_alias",
    "corpus_document_count",
    "git_blob_sha",
    "ingest",
    "ingest_corpus",
]
