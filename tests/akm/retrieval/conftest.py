"""A small indexed corpus (written straight into the store), a manifest over it, and a
deterministic bag-of-words embedder, so lane tests need neither the ingest pipeline nor a model."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from numpy.typing import NDArray

from akm.contract.ids import sha256_text
from akm.embedding import EmbeddingModelError
from akm.manifest import Manifest, load_manifest
from akm.store import EvidenceStore, NewChunk, NewLink

REF = "test:docs:public-markdown"


class BagOfWordsEmbedder:
    """Each word adds one to a hashed dimension; vectors are L2-normalised."""

    model_id = "bag-of-words"
    dimensions = 384

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        return np.stack([self.embed_query(text) for text in texts])

    def embed_query(self, text: str) -> NDArray[np.float32]:
        vector = np.zeros(384, dtype=np.float32)
        for word in re.findall(r"[a-z]+", text.lower()):
            vector[int(hashlib.sha256(word.encode()).hexdigest(), 16) % 384] += 1.0
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm else vector


class UnavailableEmbedder:
    model_id = "all-MiniLM-L6-v2"
    dimensions = 384

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        raise EmbeddingModelError("cannot load embedding model from /models/minilm: no config.json")


@dataclass(frozen=True)
class Doc:
    path: str
    ref: str
    chunks: tuple[tuple[tuple[str, ...], str], ...]
    links: tuple[tuple[int, str], ...] = ()


CORPUS = (
    Doc(
        "docs/guide.md",
        REF,
        (
            (("Guide",), "Install the service with make install, then run the tests."),
            (("Guide", "Use"), "Ask a question; the answer cites the security policy in security.md."),
        ),
        links=((1, "docs/security.md"),),
    ),
    Doc(
        "docs/security.md",
        REF,
        (
            (("Security",), "Never store secret values such as API keys in any layer."),
            (("Security", "Rotation"), "Signing keys are rotated every ninety days by the operator."),
        ),
    ),
    Doc(
        "docs/fusion.md",
        REF,
        (
            (("Fusion",), "Reciprocal rank fusion uses k=60 and records every lane contribution."),
            (("Fusion", "Caps"), "The per-source cap applies after source-level deduplication."),
        ),
        links=((0, "docs/guide.md"),),
    ),
    # Denied by the basename token rule; a misconfigured ingest indexed it anyway.
    Doc(
        "docs/api-token-notes.md",
        REF,
        ((("Notes",), "The rotation schedule for the staging vault is quarterly."),),
    ),
    # Indexed under a source ref the manifest does not know: out of scope.
    Doc(
        "other/elsewhere.md",
        "other:ref",
        ((("Elsewhere",), "Rotation schedule of another project entirely."),),
    ),
)


def _manifest_document() -> dict[str, Any]:
    return {
        "manifestVersion": "1.0.0",
        "manifestId": "test-manifest",
        "projectId": "test-project",
        "projectRoot": ".",
        "scope": {
            "defaultDecision": "deny",
            "allowedClassifications": ["public", "non-sensitive"],
            "deniedClassifications": ["private", "restricted", "unknown"],
        },
        "sourceRefs": [
            {
                "sourceId": REF,
                "rootAlias": "docs",
                "rootPath": ".",
                "classification": "public",
                "include": ["docs/**/*.md"],
                "retrievalLanes": [
                    "exact",
                    "qmd-lexical",
                    "qmd-semantic",
                    "graphify-relationship",
                    "direct-read",
                ],
                "authorityPolicy": "canonical-system-first",
                "freshnessPolicy": "working-tree-revision-and-checksum",
            }
        ],
        "security": {
            "policyRef": "test#security",
            "denyPathTokens": ["/private/"],
            "denyBasenameTokens": ["token", "secret"],
            "denyExtensions": [".db"],
            "reportDeniedSourcesAs": "count-only",
        },
        "retrieval": {"collection": "test-docs"},
        "rankingPolicy": {
            "policyId": "test-ranking",
            "priorityOrder": ["scope-match", "authority", "exact-support", "lane-rank"],
            "authorityOrder": [
                "canonical",
                "official",
                "primary",
                "reviewed",
                "secondary",
                "internal",
                "unknown",
            ],
            "freshnessMayOverrideAuthority": False,
            "rawScoresComparableAcrossLanes": False,
        },
        "fusion": {
            "method": "deterministic-priority",
            "rrfDefaultK": 60,
            "dedup": {"enabled": True, "keys": ["sourceId", "canonicalUri", "revision", "checksum"]},
            "caps": {"perSource": 2, "finalRows": 20},
            "diversity": {"fields": ["sourceId"], "requireUniqueSourcesWhenAvailable": 5},
        },
        "neighborExpansion": {
            "enabled": True,
            "stage": "after-fusion",
            "winnerRowsOnly": True,
            "maxWinners": 5,
            "beforeBlocks": 1,
            "afterBlocks": 1,
            "maxBytesPerWinner": 6000,
            "preserveOriginalLocator": True,
        },
        "verificationPolicy": {
            "candidateMaySupportClaim": False,
            "directReadRequiredForImportantClaims": True,
            "importantClaimClasses": ["number"],
            "claimSupportRequiresClaimIds": True,
            "unresolvedBlockingConflictVerdict": "HOLD",
            "checksumMismatchVerdict": "FAIL",
            "requiredDirectReadMayBeSkipped": False,
        },
        "freshnessPolicy": {
            "policyId": "test-freshness",
            "missingFreshnessState": "unknown",
            "unknownFreshnessMaySupportImportantClaim": False,
            "staleRowsEnterWinnerSet": False,
            "freshnessIsTieBreakerOnly": True,
        },
    }


@pytest.fixture
def manifest_document() -> dict[str, Any]:
    return _manifest_document()


@pytest.fixture
def manifest(tmp_path: Path) -> Manifest:
    path = tmp_path / "manifest.yaml"
    path.write_text(yaml.safe_dump(_manifest_document()), encoding="utf-8")
    return load_manifest(path, check_schema=False)


def index_corpus(store: EvidenceStore, embedder: BagOfWordsEmbedder) -> None:
    with store.transaction() as transaction:
        for doc in CORPUS:
            source_id = f"akm:docs:{doc.path}"
            transaction.upsert_source(
                source_id=source_id,
                root_alias="docs",
                path=doc.path,
                canonical_uri=f"file:{doc.path}",
                source_type="markdown",
                classification="public",
                source_ref_id=doc.ref,
                title=doc.chunks[0][0][0],
            )
            body = "\n\n".join(text for _, text in doc.chunks)
            chunks = [
                NewChunk(
                    ordinal=ordinal,
                    locator_type="line-range",
                    locator_value=f"{doc.path}:{2 * ordinal + 1}-{2 * ordinal + 1}",
                    text=text,
                    excerpt_sha256=sha256_text(text),
                    heading_path=heading,
                    start_line=2 * ordinal + 1,
                    end_line=2 * ordinal + 1,
                    embedding=embedder.embed_query(" ".join(heading) + " " + text),
                )
                for ordinal, (heading, text) in enumerate(doc.chunks)
            ]
            links = [
                NewLink(
                    link_type="markdown",
                    target=target,
                    target_source_id=f"akm:docs:{target}",
                    from_ordinal=ordinal,
                )
                for ordinal, target in doc.links
            ]
            transaction.add_source_version(
                source_id=source_id,
                revision=f"sha256:{sha256_text(body)[:16]}",
                sha256=sha256_text(body),
                path=doc.path,
                byte_size=len(body.encode()),
                chunks=chunks,
                links=links,
            )


@pytest.fixture
def embedder() -> BagOfWordsEmbedder:
    return BagOfWordsEmbedder()


@pytest.fixture
def unavailable_embedder() -> UnavailableEmbedder:
    return UnavailableEmbedder()


@pytest.fixture
def corpus_store(sqlite_store: EvidenceStore, embedder: BagOfWordsEmbedder) -> Iterator[EvidenceStore]:
    index_corpus(sqlite_store, embedder)
    yield sqlite_store
