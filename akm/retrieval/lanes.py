"""The four retrieval lanes over the evidence store.

Each lane answers ``search(request, manifest) -> LaneResult`` with candidate rows (ranked
1..n within the lane, lane-local raw scores with their meaning) and one ``LaneRun`` record:
``completed``, or ``failed`` with the error (a failing lane never takes the others down).
Lane names are the contract's: ``exact``, ``qmd-lexical``, ``qmd-semantic``,
``graphify-relationship``.
"""

from __future__ import annotations

import re
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from sqlalchemy.exc import SQLAlchemyError

from akm.claims.words import full_form
from akm.contract.ids import utc_now_iso
from akm.contract.models import EvidenceRow, LaneName, LaneRun
from akm.embedding import Embedder
from akm.manifest import Manifest
from akm.retrieval.candidates import candidate_from_chunk, scope_verdict
from akm.retrieval.query import QueryClassification
from akm.store import EvidenceStore, StoredChunk

EXACT: LaneName = "exact"
LEXICAL: LaneName = "qmd-lexical"
SEMANTIC: LaneName = "qmd-semantic"
RELATIONSHIP: LaneName = "graphify-relationship"
ALL_LANES: tuple[LaneName, ...] = (EXACT, LEXICAL, SEMANTIC, RELATIONSHIP)

# What a lane may raise that means "this lane failed", as opposed to a programming error.
LANE_FAILURES: tuple[type[BaseException], ...] = (
    OSError,
    RuntimeError,
    ImportError,
    ValueError,
    SQLAlchemyError,
)
_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class LaneRequest:
    """One lane's share of a retrieval: the validated query and where results are recorded."""

    query: str
    classification: QueryClassification
    result_set_id: str
    limit: int
    seeds: tuple[EvidenceRow, ...] = ()


@dataclass(frozen=True, slots=True)
class LaneHit:
    chunk: StoredChunk
    raw_score: float
    matched_terms: tuple[str, ...] = ()
    relationship_path: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class LaneResult:
    candidates: tuple[EvidenceRow, ...]
    lane_run: LaneRun
    hits: tuple[LaneHit, ...] = field(default=())
    # CPU time of the thread that ran the lane; on a shared machine it tracks the work better than wall time.
    cpu_ms: float = 0.0


class Lane(Protocol):
    name: LaneName

    def search(self, request: LaneRequest, manifest: Manifest) -> LaneResult: ...


def skipped_run(lane: LaneName, query: str, reason: str, parameters: dict[str, Any] | None = None) -> LaneRun:
    return LaneRun(
        lane=lane,
        status="skipped",
        query=query,
        parameters=parameters or {},
        result_count=0,
        skip_reason=reason,
    )


class StoreLane:
    """Shared lane mechanics: timing, scope filtering, ranking, row building, failure capture."""

    name: LaneName = "other"
    raw_score_meaning = ""

    def __init__(self, store: EvidenceStore) -> None:
        self.store = store

    def parameters(self, request: LaneRequest) -> dict[str, Any]:
        return {"limit": request.limit}

    def find(self, request: LaneRequest) -> list[LaneHit]:
        raise NotImplementedError

    def search(self, request: LaneRequest, manifest: Manifest) -> LaneResult:
        started_at = utc_now_iso()
        started = time.perf_counter()
        cpu_started = time.thread_time()
        parameters = self.parameters(request)
        try:
            found = self.find(request)
        except LANE_FAILURES as error:
            return LaneResult(
                candidates=(),
                lane_run=LaneRun(
                    lane=self.name,
                    status="failed",
                    query=request.query,
                    parameters=parameters,
                    result_count=0,
                    started_at=started_at,
                    finished_at=utc_now_iso(),
                    latency_ms=(time.perf_counter() - started) * 1000.0,
                    error=f"{type(error).__name__}: {error}",
                ),
            )
        eligible: list[tuple[LaneHit, Any]] = []
        for hit in found:
            verdict = scope_verdict(hit.chunk, manifest, self.name)
            if verdict.eligible and verdict.source_ref is not None:
                eligible.append((hit, verdict.source_ref))
            if len(eligible) >= request.limit:
                break
        search_ms = (time.perf_counter() - started) * 1000.0
        candidates = tuple(
            candidate_from_chunk(
                hit.chunk,
                manifest,
                ref,
                lane=self.name,
                query=request.query,
                rank=rank,
                result_set_id=request.result_set_id,
                parameters=parameters,
                raw_score=hit.raw_score,
                raw_score_meaning=self.raw_score_meaning,
                matched_terms=hit.matched_terms,
                relationship_path=hit.relationship_path,
                latency_ms=search_ms,
                at=started_at,
            )
            for rank, (hit, ref) in enumerate(eligible, start=1)
        )
        run = LaneRun(
            lane=self.name,
            status="completed",
            query=request.query,
            parameters=parameters,
            result_count=len(candidates),
            started_at=started_at,
            finished_at=utc_now_iso(),
            latency_ms=(time.perf_counter() - started) * 1000.0,
        )
        return LaneResult(
            candidates=candidates,
            lane_run=run,
            hits=tuple(hit for hit, _ in eligible),
            cpu_ms=(time.thread_time() - cpu_started) * 1000.0,
        )


def _overfetch(limit: int) -> int:
    # Out-of-scope chunks are dropped after the store answers; ask for a little more so
    # the lane still fills its limit when a few are dropped.
    return limit + max(5, limit // 4)


class ExactLane(StoreLane):
    """Literal tokens, quoted strings, paths and IDs found verbatim in chunk text or source identity."""

    name: LaneName = EXACT
    raw_score_meaning = (
        "count of query literals found verbatim in the chunk or its source path/ID; higher is better"
    )

    def __init__(self, store: EvidenceStore, manifest: Manifest) -> None:
        super().__init__(store)
        self.manifest = manifest

    def literals(self, request: LaneRequest) -> tuple[str, ...]:
        return request.classification.literals or (request.query,)

    def searchable_literals(self, request: LaneRequest) -> tuple[str, ...]:
        # A denied path is never looked up: the answer must be the same as for a path that
        # does not exist, so not even the store is asked about it.
        return tuple(literal for literal in self.literals(request) if not self._names_denied_path(literal))

    def _names_denied_path(self, literal: str) -> bool:
        looks_like_path = "/" in literal or "\\" in literal or re.search(r"\.\w{1,8}$", literal) is not None
        return looks_like_path and self.manifest.denial_for_path(literal) is not None

    def parameters(self, request: LaneRequest) -> dict[str, Any]:
        return {
            "limit": request.limit,
            "match": "verbatim substring, case-sensitive for text, case-insensitive for paths and IDs",
            "literals": list(self.literals(request)),
        }

    def find(self, request: LaneRequest) -> list[LaneHit]:
        fetch = _overfetch(request.limit)
        matched: dict[int, tuple[StoredChunk, list[str], bool]] = {}
        for literal in self.searchable_literals(request):
            sources = self.store.chunks_of_sources(self.store.find_sources(literal, limit=fetch))
            for chunks in sources.values():
                for chunk in chunks[:fetch]:
                    entry = matched.setdefault(chunk.chunk_id, (chunk, [], True))
                    if literal not in entry[1]:
                        entry[1].append(literal)
            for chunk in self.store.chunks_containing(literal, limit=fetch):
                entry = matched.setdefault(chunk.chunk_id, (chunk, [], False))
                if literal not in entry[1]:
                    entry[1].append(literal)
        # Identity matches (path / ID) first, then more literals, then storage order.
        ordered = sorted(
            matched.values(),
            key=lambda entry: (not entry[2], -len(entry[1]), entry[0].source_id, entry[0].ordinal),
        )
        return [LaneHit(chunk, float(len(terms)), tuple(terms)) for chunk, terms, _ in ordered]


# Lucene's default English stopword list (the one Anserini's BM25 baselines use). Dropping
# these leaves the BM25 ranking essentially unchanged and shrinks the OR match set.
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "if",
        "in",
        "into",
        "is",
        "it",
        "no",
        "not",
        "of",
        "on",
        "or",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "will",
        "with",
    ]
)


# The scaffolding of a question, which says nothing of its topic: its question word, its auxiliary
# verb and the asker's pronouns. In a small collection they are not common enough for BM25 to
# ignore: "Can I pay for my bike repair with a cheque?" ranked a bin leaflet's FAQ ("Can I have a
# bigger grey bin?", "my bin") above the bike shop's payment terms.
QUESTION_WORDS = frozenset(
    {
        "what", "which", "who", "whom", "whose", "when", "where", "why", "how",
        "do", "does", "did", "can", "could", "should", "would", "shall", "must", "am", "have", "has",
        "i", "me", "my", "we", "us", "our", "you", "your",
        # typed without the apostrophe: "whats the ip address", "im an nhs patient"
        "whats", "wheres", "whos", "hows", "whens", "im", "ive", "dont", "doesnt", "cant",
    }
)  # fmt: skip


def lexical_terms(query: str) -> list[str]:
    """Lowercased query words without stopwords and a question's scaffolding (all words when every
    word is one of those), and the full word of each short form among them."""
    said = _WORD.findall(query.lower())
    words = list(dict.fromkeys(said))
    content = [word for word in words if word not in STOPWORDS and word not in QUESTION_WORDS]
    # A short form is searched for with the word it stands for ("temp" and "temperature").
    spelled = [
        part
        for at, word in enumerate(said)
        if word in content and (full := full_form(word, said[at - 1] if at else "")) is not None
        for part in _WORD.findall(full)
        if part not in content
    ]
    return list(dict.fromkeys(content + spelled)) if content else words


class LexicalLane(StoreLane):
    """BM25 through the store (FTS5 on SQLite, tsvector on PostgreSQL)."""

    name: LaneName = LEXICAL

    def __init__(self, store: EvidenceStore) -> None:
        super().__init__(store)
        self.raw_score_meaning = store.lexical_score_meaning

    def parameters(self, request: LaneRequest) -> dict[str, Any]:
        return {
            "limit": request.limit,
            "backend": self.store.dialect_name,
            "match": "any query term",
            "terms": lexical_terms(request.query),
            "stopwords": "lucene-english",
        }

    def find(self, request: LaneRequest) -> list[LaneHit]:
        terms = lexical_terms(request.query)
        wanted = set(terms)
        hits: list[LaneHit] = []
        for chunk, score in self.store.lexical_search(" ".join(terms), _overfetch(request.limit)):
            searchable = " ".join((*chunk.heading_path, chunk.text)).lower()
            present = wanted.intersection(_WORD.findall(searchable))
            hits.append(LaneHit(chunk, score, tuple(sorted(present))))
        return hits


_THREADS_LOCK = threading.Lock()


@contextmanager
def single_intra_op_thread() -> Iterator[None]:
    """Run the enclosed torch work on one intra-op thread, then restore the previous count.

    One short query gains nothing from more threads, and on a busy machine the extra OpenMP
    threads spin: measured on two cores, a MiniLM query embedding took 18 ms with one thread
    and over 500 ms with two. The vectors are the same either way. Held under a lock so
    concurrent lanes cannot restore each other's setting; a process without torch loaded
    is left alone.
    """
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    with _THREADS_LOCK:
        previous = torch.get_num_threads()
        if previous != 1:
            torch.set_num_threads(1)
        try:
            yield
        finally:
            if previous != 1:
                torch.set_num_threads(previous)


class SemanticLane(StoreLane):
    """Cosine similarity between the query embedding and chunk embeddings."""

    name: LaneName = SEMANTIC

    def __init__(self, store: EvidenceStore, embedder: Embedder | None) -> None:
        super().__init__(store)
        self.embedder = embedder
        self.model_name = embedder.model_id if embedder is not None else "no embedding model"
        self.raw_score_meaning = f"cosine similarity of {self.model_name} embeddings; higher is better"

    def parameters(self, request: LaneRequest) -> dict[str, Any]:
        return {"limit": request.limit, "model": self.model_name, "metric": "cosine"}

    def find(self, request: LaneRequest) -> list[LaneHit]:
        if self.embedder is None:
            raise RuntimeError("no embedding model is configured")
        with single_intra_op_thread():
            vector = self.embedder.embed([request.query])[0]
        return [
            LaneHit(chunk, score)
            for chunk, score in self.store.vector_search(vector, _overfetch(request.limit))
        ]


class RelationshipLane(StoreLane):
    """One link hop from the other lanes' best hits (markdown links and wikilinks)."""

    name: LaneName = RELATIONSHIP
    raw_score_meaning = "link hops from a seed hit of another lane; lower is better"

    def __init__(self, store: EvidenceStore, seeds_per_lane: int = 5) -> None:
        super().__init__(store)
        self.seeds_per_lane = seeds_per_lane

    def parameters(self, request: LaneRequest) -> dict[str, Any]:
        return {
            "limit": request.limit,
            "hops": 1,
            "seedsPerLane": self.seeds_per_lane,
            "seedSources": list(dict.fromkeys(seed.source.source_id for seed in request.seeds)),
        }

    def find(self, request: LaneRequest) -> list[LaneHit]:
        hits: list[LaneHit] = []
        seen: set[int] = set()
        seed_sources = list(dict.fromkeys(seed.source.source_id for seed in request.seeds))
        outgoing = self.store.links_from_sources(seed_sources)
        incoming = self.store.links_to_sources(seed_sources)
        for seed_source in seed_sources:
            for edge in outgoing[seed_source]:
                if edge.target_source_id is None or edge.target_source_id == seed_source:
                    continue
                chunk = self._target_chunk(edge.target_source_id, edge.anchor)
                path = (seed_source, f"{edge.link_type}:{edge.target}", edge.target_source_id)
                if chunk is not None and chunk.chunk_id not in seen:
                    seen.add(chunk.chunk_id)
                    hits.append(LaneHit(chunk, 1.0, relationship_path=path))
            for edge in incoming[seed_source]:
                if edge.from_source_id == seed_source:
                    continue
                chunk = self._linking_chunk(edge.from_source_id, edge.from_chunk_id)
                path = (seed_source, f"linked-from:{edge.link_type}", edge.from_source_id)
                if chunk is not None and chunk.chunk_id not in seen:
                    seen.add(chunk.chunk_id)
                    hits.append(LaneHit(chunk, 1.0, relationship_path=path))
        return hits

    def _target_chunk(self, source_id: str, anchor: str | None) -> StoredChunk | None:
        chunks = self.store.chunks_of_source(source_id)
        if anchor:
            wanted = _slug(anchor)
            for chunk in chunks:
                if chunk.heading_path and _slug(chunk.heading_path[-1]) == wanted:
                    return chunk
        return chunks[0] if chunks else None

    def _linking_chunk(self, source_id: str, chunk_id: int | None) -> StoredChunk | None:
        if chunk_id is not None:
            chunk = self.store.get_chunk(chunk_id)
            if chunk is not None and chunk.is_current:
                return chunk
        chunks = self.store.chunks_of_source(source_id)
        return chunks[0] if chunks else None


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def seeds_from(results: Sequence[LaneResult], per_lane: int) -> tuple[EvidenceRow, ...]:
    """The best `per_lane` candidates of each completed lane, the relationship lane's seeds."""
    seeds: list[EvidenceRow] = []
    for result in results:
        seeds.extend(result.candidates[:per_lane])
    return tuple(seeds)
