"""Run the lanes a query needs, record every lane (run, skipped or failed), collect candidates.

Selective fan-out (manifest ``retrieval.selectiveFanout``): the query class decides which
lanes run; a lane that is not run is recorded as ``skipped`` with its reason, never left
out silently. Explicitly requested lanes run whatever the class.

The semantic lane runs on a worker thread while the exact and lexical lanes run on the caller's:
its time goes mostly to the query embedding (torch, one intra-op thread) and theirs to SQLite
or PostgreSQL, all of which release the GIL, so a query costs about its slowest lane rather than
the sum. The relationship lane runs last, from the other lanes' hits.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from akm.contract.models import EvidenceRow, LaneName, LaneRun
from akm.embedding import Embedder
from akm.manifest import Manifest
from akm.retrieval.lanes import (
    ALL_LANES,
    EXACT,
    LEXICAL,
    RELATIONSHIP,
    SEMANTIC,
    ExactLane,
    LaneRequest,
    LaneResult,
    LexicalLane,
    RelationshipLane,
    SemanticLane,
    seeds_from,
    skipped_run,
)
from akm.retrieval.query import QueryClass, QueryClassification, classify_query
from akm.store import EvidenceStore, StoreTransaction

DEFAULT_LANE_LIMIT = 20
SEEDS_PER_LANE = 5

# Lanes each query class fans out to when the caller does not name lanes.
FANOUT: dict[QueryClass, tuple[LaneName, ...]] = {
    QueryClass.EXACT_PATH_PROPERTY: (EXACT, LEXICAL),
    QueryClass.LITERAL_TOKEN: (EXACT, LEXICAL, SEMANTIC),
    QueryClass.SEMANTIC_RECALL: (LEXICAL, SEMANTIC),
    QueryClass.RELATIONSHIP_NEIGHBORHOOD: (EXACT, LEXICAL, SEMANTIC, RELATIONSHIP),
    QueryClass.AUTHORITY_CONFLICT: (EXACT, LEXICAL, SEMANTIC, RELATIONSHIP),
    QueryClass.MIXED: (EXACT, LEXICAL, SEMANTIC, RELATIONSHIP),
}
_SKIP_REASONS: dict[LaneName, str] = {
    EXACT: "query class {cls}: no literal token, path or ID to match verbatim",
    LEXICAL: "query class {cls}: lexical recall not selected",
    SEMANTIC: "query class {cls}: exact and lexical anchors suffice; no paraphrase recall needed",
    RELATIONSHIP: "query class {cls}: no link or neighbourhood intent",
}


_POOL_LOCK = threading.Lock()
_pool: ThreadPoolExecutor | None = None


def _lane_pool() -> ThreadPoolExecutor:
    global _pool
    with _POOL_LOCK:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="akm-lane")
        return _pool


class UnknownLaneError(ValueError):
    """A requested lane name that is not one of the four retrieval lanes."""


@dataclass(frozen=True, slots=True)
class RetrievalResult:
    """Every lane's candidates (lane order, then lane rank) and every lane's run record."""

    query: str
    query_class: QueryClass
    classification: QueryClassification
    result_set_id: str
    candidates: tuple[EvidenceRow, ...]
    lane_runs: tuple[LaneRun, ...]
    lane_results: tuple[LaneResult, ...]

    def candidates_of(self, lane: LaneName) -> tuple[EvidenceRow, ...]:
        return tuple(row for row in self.candidates if row.retrieval.lane == lane)

    def lane_run(self, lane: LaneName) -> LaneRun:
        return next(run for run in self.lane_runs if run.lane == lane)

    @property
    def chunk_ids(self) -> dict[str, int]:
        """Evidence ID → the stored chunk its row was cut from (lanes that found one chunk share its ID)."""
        return {
            row.evidence_id: hit.chunk.chunk_id
            for result in self.lane_results
            for row, hit in zip(result.candidates, result.hits, strict=True)
        }


def new_result_set_id() -> str:
    return f"rs:{uuid.uuid4().hex}"


def _selected_lanes(
    classification: QueryClassification, requested: Iterable[str] | None
) -> tuple[tuple[LaneName, ...], dict[LaneName, str]]:
    if requested is not None:
        names = tuple(dict.fromkeys(requested))
        unknown = [name for name in names if name not in ALL_LANES]
        if unknown:
            raise UnknownLaneError(f"unknown lane(s) {', '.join(unknown)}; use {', '.join(ALL_LANES)}")
        chosen: tuple[LaneName, ...] = tuple(lane for lane in ALL_LANES if lane in names)
        return chosen, {lane: "not requested by the caller" for lane in ALL_LANES if lane not in chosen}
    chosen = FANOUT[classification.query_class]
    reasons = {
        lane: _SKIP_REASONS[lane].format(cls=classification.query_class.value)
        for lane in ALL_LANES
        if lane not in chosen
    }
    return chosen, reasons


def _manifest_lanes(manifest: Manifest) -> set[str]:
    return {lane for ref in manifest.source_refs for lane in ref.retrieval_lanes}


def retrieve(
    query: str,
    store: EvidenceStore,
    manifest: Manifest,
    embedder: Embedder | None,
    *,
    lanes: Sequence[str] | None = None,
    limit: int = DEFAULT_LANE_LIMIT,
    result_set_id: str | None = None,
    record: bool = True,
) -> RetrievalResult:
    """Classify `query`, run the selected lanes, and return candidates plus lane runs.

    Raises `QueryError` (empty, too long, binary) before anything is searched and
    `UnknownLaneError` for a lane name that does not exist. With `record`, every lane run
    is written to the store's lane-run log.
    """
    classification = classify_query(query)
    text = classification.query
    result_set_id = result_set_id or new_result_set_id()
    chosen, skip_reasons = _selected_lanes(classification, lanes)
    enabled = _manifest_lanes(manifest)
    if EXACT in chosen and lanes is None and not classification.literals:
        chosen = tuple(lane for lane in chosen if lane != EXACT)
        skip_reasons[EXACT] = _SKIP_REASONS[EXACT].format(cls=classification.query_class.value)

    request = LaneRequest(query=text, classification=classification, result_set_id=result_set_id, limit=limit)
    results: dict[LaneName, LaneResult] = {}
    runs: dict[LaneName, LaneRun] = {}
    runnable = [lane for lane in ALL_LANES if lane in chosen and lane in enabled]
    semantic: Future[LaneResult] | None = None
    if SEMANTIC in runnable and (EXACT in runnable or LEXICAL in runnable):
        semantic = _lane_pool().submit(SemanticLane(store, embedder).search, request, manifest)
    for lane in ALL_LANES:
        if lane not in chosen:
            runs[lane] = skipped_run(lane, text, skip_reasons[lane])
            continue
        if lane not in enabled:
            runs[lane] = skipped_run(lane, text, "lane not enabled for any source ref in the manifest")
            continue
        if lane == SEMANTIC and semantic is not None:
            result = semantic.result()
        elif lane == RELATIONSHIP:
            seeds = seeds_from(list(results.values()), SEEDS_PER_LANE)
            if not seeds:
                runs[lane] = skipped_run(lane, text, "no seed hits from the other lanes to expand from")
                continue
            lane_request = LaneRequest(
                query=text,
                classification=classification,
                result_set_id=result_set_id,
                limit=limit,
                seeds=seeds,
            )
            result = RelationshipLane(store, SEEDS_PER_LANE).search(lane_request, manifest)
        elif lane == EXACT:
            result = ExactLane(store, manifest).search(request, manifest)
        elif lane == LEXICAL:
            result = LexicalLane(store).search(request, manifest)
        else:
            result = SemanticLane(store, embedder).search(request, manifest)
        results[lane] = result
        runs[lane] = result.lane_run

    lane_runs = tuple(runs[lane] for lane in ALL_LANES)
    if record:
        record_lane_runs(store, lane_runs, result_set_id)
    ordered_results = tuple(results[lane] for lane in ALL_LANES if lane in results)
    return RetrievalResult(
        query=text,
        query_class=classification.query_class,
        classification=classification,
        result_set_id=result_set_id,
        candidates=tuple(row for result in ordered_results for row in result.candidates),
        lane_runs=lane_runs,
        lane_results=ordered_results,
    )


def record_lane_runs(store: EvidenceStore, lane_runs: Iterable[LaneRun], result_set_id: str) -> None:
    """Write lane runs to the store's lane-run log in one transaction."""
    with store.transaction() as transaction:
        write_lane_runs(transaction, lane_runs, result_set_id)


def write_lane_runs(
    transaction: StoreTransaction,
    lane_runs: Iterable[LaneRun],
    result_set_id: str,
    packet_id: str | None = None,
) -> None:
    """Write lane runs inside an open transaction, linked to ``packet_id`` when one was built."""
    for run in lane_runs:
        transaction.record_lane_run(
            result_set_id=result_set_id,
            lane=run.lane,
            query=run.query,
            status=run.status,
            parameters=run.parameters,
            candidate_count=run.result_count,
            latency_ms=run.latency_ms,
            skip_reason=run.skip_reason,
            error=run.error,
            packet_id=packet_id,
        )
