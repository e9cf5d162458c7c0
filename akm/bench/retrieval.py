"""Retrieval benchmark over a BEIR-style corpus: each lane alone and both fusion methods.

The corpus is indexed into a throwaway store (one chunk per document: title and text, the
same text the JSONL direct reader re-reads). Embeddings are cached on disk by the sha256 of
the embedded text, so a re-run embeds only what changed. Rankings are scored at document
level: a document sits at the position of its best chunk.
"""

from __future__ import annotations

import gzip
import json
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from akm.contract.ids import sha256_text
from akm.embedding import Embedder
from akm.fusion import FusionSettings, fuse
from akm.ingest import corpus_alias, corpus_document_count, ingest_corpus
from akm.manifest import Manifest, SourceRef
from akm.retrieval.evaluation import collapse_to_documents, mrr_at_k, ndcg_at_k, percentile, recall_at_k
from akm.retrieval.lanes import ALL_LANES
from akm.retrieval.orchestrate import retrieve
from akm.store import EvidenceStore
from decoding.bench.errors import BenchmarkInputError

FUSION_METHODS = ("deterministic-priority", "rrf")
_SLUG = re.compile(r"[^A-Za-z0-9._-]+")


def _open_text(path: Path) -> Any:
    if not path.is_file():
        raise BenchmarkInputError(f"{path} does not exist")
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return path.open("r", encoding="utf-8")


def _jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with _open_text(path) as stream:
        for number, line in enumerate(stream, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise BenchmarkInputError(f"{path}:{number}: not JSON: {error.msg}") from error
            if not isinstance(record, dict) or "_id" not in record:
                raise BenchmarkInputError(f"{path}:{number}: expected an object with an _id")
            yield record


def load_queries(path: Path) -> dict[str, str]:
    return {str(record["_id"]): str(record.get("text") or "") for record in _jsonl(path)}


def load_qrels(path: Path) -> dict[str, dict[str, int]]:
    """``query-id → corpus-id → grade`` from a BEIR qrels TSV (header line optional)."""
    judgments: dict[str, dict[str, int]] = {}
    with _open_text(path) as stream:
        for number, line in enumerate(stream, start=1):
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3 or (number == 1 and not parts[2].lstrip("-").isdigit()):
                if number == 1:
                    continue
                raise BenchmarkInputError(f"{path}:{number}: expected query-id, corpus-id, score")
            judgments.setdefault(parts[0], {})[parts[1]] = int(parts[2])
    return judgments


class EmbeddingCache:
    """Vectors keyed by the sha256 of the embedded text, one folder per model."""

    def __init__(self, directory: Path, model_id: str) -> None:
        self.directory = directory / _SLUG.sub("_", model_id)
        self._vectors: dict[str, NDArray[np.float32]] = {}
        self._dirty = False
        keys_file = self.directory / "keys.json"
        vectors_file = self.directory / "vectors.npy"
        if keys_file.is_file() and vectors_file.is_file():
            keys = json.loads(keys_file.read_text(encoding="utf-8"))
            matrix = np.load(vectors_file)
            if len(keys) == matrix.shape[0]:
                self._vectors = {key: matrix[index] for index, key in enumerate(keys)}

    def __len__(self) -> int:
        return len(self._vectors)

    def get(self, key: str) -> NDArray[np.float32] | None:
        return self._vectors.get(key)

    def put(self, key: str, vector: NDArray[np.float32]) -> None:
        self._vectors[key] = np.asarray(vector, dtype=np.float32)
        self._dirty = True

    def save(self) -> None:
        if not self._dirty:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        keys = list(self._vectors)
        matrix = np.stack([self._vectors[key] for key in keys]) if keys else np.zeros((0, 384), np.float32)
        # Written beside and renamed, so an interrupted save never leaves a torn cache.
        np.save(self.directory / "vectors.tmp.npy", matrix)
        (self.directory / "keys.tmp.json").write_text(json.dumps(keys), encoding="utf-8")
        (self.directory / "vectors.tmp.npy").replace(self.directory / "vectors.npy")
        (self.directory / "keys.tmp.json").replace(self.directory / "keys.json")
        self._dirty = False


class CachingEmbedder:
    """An `Embedder` that answers from an `EmbeddingCache` and embeds only unseen texts."""

    def __init__(self, embedder: Embedder, cache: EmbeddingCache) -> None:
        self.embedder = embedder
        self.cache = cache
        self.model_id = embedder.model_id
        self.dimensions = embedder.dimensions
        self.computed = 0
        self.reused = 0
        self.seconds = 0.0

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        keys = [sha256_text(text) for text in texts]
        missing = [index for index, key in enumerate(keys) if self.cache.get(key) is None]
        if missing:
            started = time.perf_counter()
            vectors = self.embedder.embed([texts[index] for index in missing])
            self.seconds += time.perf_counter() - started
            for index, vector in zip(missing, vectors, strict=True):
                self.cache.put(keys[index], vector)
            # Saved per batch, so an interrupted run keeps what it already paid for.
            self.cache.save()
        self.computed += len(missing)
        self.reused += len(texts) - len(missing)
        rows = [self.cache.get(key) for key in keys]
        return np.stack([row for row in rows if row is not None]).astype(np.float32)


def ingest_benchmark_corpus(
    store: EvidenceStore, corpus: Path, embedder: CachingEmbedder | None
) -> dict[str, float | int | None]:
    """Ingest `corpus` with the project's corpus ingest and report its throughput."""
    report = ingest_corpus(store, corpus, alias=corpus_alias(corpus), embedder=embedder)
    documents = report.files_seen
    return {
        "documents": documents,
        "chunks": report.chunks_written,
        "embedded": embedder.computed if embedder is not None else 0,
        "cacheHits": embedder.reused if embedder is not None else 0,
        "embedSeconds": round(embedder.seconds, 3) if embedder is not None else 0.0,
        "totalSeconds": round(report.seconds, 3),
        "documentsPerSecond": round(documents / report.seconds, 1) if report.seconds else None,
    }


def benchmark_manifest(base: Manifest, corpus: Path) -> Manifest:
    """The project manifest with one public source ref over the benchmark corpus, all lanes on."""
    alias = corpus_alias(corpus)
    ref = SourceRef.model_validate(
        {
            # The corpus ingest files every document under the source ref ``corpus:<alias>``.
            "sourceId": f"corpus:{alias}",
            "rootAlias": alias,
            "rootPath": ".",
            "classification": "public",
            "include": ["**"],
            "retrievalLanes": [*ALL_LANES, "direct-read"],
            "authorityPolicy": "primary-literature",
            "freshnessPolicy": "corpus-file-checksum",
        }
    )
    scope = base.scope.model_copy(update={"max_corpus_documents": corpus_document_count(corpus)})
    return base.model_copy(
        update={"source_refs": (ref,), "manifest_id": f"{base.manifest_id}-benchmark", "scope": scope}
    )


@dataclass(slots=True)
class _Scores:
    ndcg: list[float] = field(default_factory=list)
    recall: list[float] = field(default_factory=list)
    mrr: list[float] = field(default_factory=list)
    latency_ms: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)

    def add(
        self, ranking: Sequence[str], judgments: Mapping[str, int], latency_ms: float, cpu_ms: float
    ) -> None:
        self.ndcg.append(ndcg_at_k(ranking, judgments, 10))
        self.recall.append(recall_at_k(ranking, judgments, 100))
        self.mrr.append(mrr_at_k(ranking, judgments, 10))
        self.latency_ms.append(latency_ms)
        self.cpu_ms.append(cpu_ms)

    def metrics(self) -> dict[str, float | int]:
        count = len(self.ndcg)
        return {
            "queries": count,
            "ndcg@10": round(sum(self.ndcg) / count, 4) if count else 0.0,
            "recall@100": round(sum(self.recall) / count, 4) if count else 0.0,
            "mrr@10": round(sum(self.mrr) / count, 4) if count else 0.0,
        }

    def latency(self) -> dict[str, float]:
        """Wall-clock and process-CPU percentiles in milliseconds."""
        if not self.latency_ms:
            return {"p50": 0.0, "p95": 0.0, "cpu_p50": 0.0, "cpu_p95": 0.0}
        return {
            "p50": round(percentile(self.latency_ms, 0.5), 2),
            "p95": round(percentile(self.latency_ms, 0.95), 2),
            "cpu_p50": round(percentile(self.cpu_ms, 0.5), 2),
            "cpu_p95": round(percentile(self.cpu_ms, 0.95), 2),
        }


@dataclass(frozen=True, slots=True)
class BenchmarkSettings:
    depth: int = 100
    per_source_cap: int = 1
    rrf_k: int = 60
    service_limit: int = 20
    lanes: tuple[str, ...] = ALL_LANES
    fused_lanes: tuple[str, ...] = ("qmd-lexical", "qmd-semantic")
    # Other lane sets fused from the same candidates, reported beside the headline figures.
    variant_lane_sets: tuple[tuple[str, ...], ...] = (ALL_LANES,)


def run_queries(
    store: EvidenceStore,
    manifest: Manifest,
    embedder: Embedder | None,
    queries: Mapping[str, str],
    qrels: Mapping[str, Mapping[str, int]],
    settings: BenchmarkSettings,
) -> dict[str, Any]:
    """Score every judged query on each lane alone and on each fusion method."""
    lanes = {lane: _Scores() for lane in settings.lanes}
    fused = {method: _Scores() for method in FUSION_METHODS}
    variants = {
        lane_set: {method: _Scores() for method in FUSION_METHODS} for lane_set in settings.variant_lane_sets
    }
    retrieval = _Scores()
    lane_status: dict[str, dict[str, int]] = {lane: {} for lane in settings.lanes}
    for query_id, judgments in qrels.items():
        query = queries.get(query_id)
        if not query:
            continue
        started = time.perf_counter()
        cpu_started = time.process_time()
        result = retrieve(
            query, store, manifest, embedder, lanes=settings.lanes, limit=settings.depth, record=False
        )
        retrieve_ms = (time.perf_counter() - started) * 1000.0
        retrieve_cpu_ms = (time.process_time() - cpu_started) * 1000.0
        retrieval.latency_ms.append(retrieve_ms)
        retrieval.cpu_ms.append(retrieve_cpu_ms)
        for lane_result in result.lane_results:
            ranking = collapse_to_documents([_doc_id(row.source.source_id) for row in lane_result.candidates])
            lane_ms = lane_result.lane_run.latency_ms or 0.0
            lanes[lane_result.lane_run.lane].add(ranking, judgments, lane_ms, lane_result.cpu_ms)
        for run in result.lane_runs:
            counts = lane_status[run.lane]
            counts[run.status] = counts.get(run.status, 0) + 1
        for lane_set in (settings.fused_lanes, *settings.variant_lane_sets):
            candidates = [row for row in result.candidates if row.retrieval.lane in lane_set]
            for method in FUSION_METHODS:
                fuse_started = time.perf_counter()
                fuse_cpu_started = time.process_time()
                fusion = fuse(candidates, _fusion_settings(method, settings, manifest))
                fuse_ms = (time.perf_counter() - fuse_started) * 1000.0
                fuse_cpu_ms = (time.process_time() - fuse_cpu_started) * 1000.0
                ranking = collapse_to_documents([_doc_id(row.source.source_id) for row in fusion.winners])
                scores = fused[method] if lane_set == settings.fused_lanes else variants[lane_set][method]
                scores.add(ranking, judgments, retrieve_ms + fuse_ms, retrieve_cpu_ms + fuse_cpu_ms)
    service = _service_latency(
        store, manifest, embedder, [queries[q] for q in qrels if queries.get(q)], settings
    )
    return {
        "lanes": {
            lane: {**scores.metrics(), "laneRuns": lane_status[lane]} for lane, scores in lanes.items()
        },
        "fused": {method: scores.metrics() for method, scores in fused.items()},
        "fusedVariants": {
            "+".join(lane_set): {method: scores.metrics() for method, scores in by_method.items()}
            for lane_set, by_method in variants.items()
        },
        "latency_ms": {
            "lanes": {lane: scores.latency() for lane, scores in lanes.items()},
            "retrieve": retrieval.latency(),
            "service": {
                **service.latency(),
                "lanes": "selective fan-out by query class",
                "limit": settings.service_limit,
                "fusion": "manifest default",
            },
            "fused": {method: scores.latency() for method, scores in fused.items()},
        },
    }


def _fusion_settings(method: str, settings: BenchmarkSettings, manifest: Manifest) -> FusionSettings:
    return FusionSettings(
        method=method,  # type: ignore[arg-type]
        rrf_k=settings.rrf_k,
        per_source_cap=settings.per_source_cap,
        max_rows=settings.depth,
        unique_sources_when_available=0,
        authority_order=tuple(manifest.ranking_policy.authority_order),
    )


def _service_latency(
    store: EvidenceStore,
    manifest: Manifest,
    embedder: Embedder | None,
    queries: Sequence[str],
    settings: BenchmarkSettings,
) -> _Scores:
    """Latency of what the service does per query: fan-out by class, lane limit, default fusion."""
    timings = _Scores()
    fusion_settings = FusionSettings.from_manifest(manifest)
    for query in queries:
        started = time.perf_counter()
        cpu_started = time.process_time()
        result = retrieve(query, store, manifest, embedder, limit=settings.service_limit, record=False)
        fuse(result.candidates, fusion_settings)
        timings.latency_ms.append((time.perf_counter() - started) * 1000.0)
        timings.cpu_ms.append((time.process_time() - cpu_started) * 1000.0)
    return timings


def _doc_id(source_id: str) -> str:
    return source_id.rsplit(":", 1)[-1]
