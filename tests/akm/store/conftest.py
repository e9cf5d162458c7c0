"""A source version written straight into a store, for tests of the store's read paths."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from akm.store import EvidenceStore, NewChunk, NewLink


def add_markdown_version(
    store: EvidenceStore,
    source_id: str,
    texts: Sequence[str],
    *,
    sha: str,
    embeddings: Sequence[NDArray[np.float32]] | None = None,
    links: Sequence[NewLink] = (),
) -> int:
    """Upsert ``docs/<source_id>.md`` and add a version with one line-range chunk per text; its version id."""
    with store.transaction() as tx:
        tx.upsert_source(
            source_id=source_id,
            root_alias="docs",
            path=f"{source_id}.md",
            canonical_uri=f"file:docs/{source_id}.md",
            source_type="markdown",
            classification="public",
            source_ref_id="ref",
            title=source_id.title(),
        )
        return tx.add_source_version(
            source_id=source_id,
            revision=f"rev-{sha}",
            sha256=sha,
            path=f"{source_id}.md",
            byte_size=10,
            chunks=[
                NewChunk(
                    ordinal=ordinal,
                    locator_type="line-range",
                    locator_value=f"{ordinal + 1}-{ordinal + 1}",
                    text=text,
                    excerpt_sha256=hashlib.sha256(text.encode()).hexdigest(),
                    start_line=ordinal + 1,
                    end_line=ordinal + 1,
                    embedding=embeddings[ordinal] if embeddings is not None else None,
                )
                for ordinal, text in enumerate(texts)
            ],
            links=list(links),
        )
