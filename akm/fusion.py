"""Fusion: lane candidates → winners, with every ordering decision and exclusion recorded.

Order of operations (EVIDENCE-SCHEMA §4.6, §5.3, E5–E9):

1. scope gate: ``denied`` / ``out-of-scope`` rows and stale rows never compete;
2. source-level dedup: rows with one sourceId + canonicalUri + revision + checksum + locator
   collapse into one item that keeps the best locator and every lane's rank (E8);
3. ordering: ``deterministic-priority`` (scope, authority, exact support, lane rank,
   semantic / relationship support, freshness only as a tie-break) or ``rrf``
   (Σ 1 / (k + rank) over lanes; a comparison baseline, never an authority score);
4. per-source cap (after dedup), diversity (first winners from distinct sources when
   available), then ``maxRows``.

Raw lane scores are never read here (E6): only ranks and recorded policy.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from akm.contract.models import (
    ContextExpansion,
    EvidenceRow,
    ExcludedRow,
    ExclusionReason,
    Fusion,
    FusionContribution,
    FusionMethod,
)
from akm.manifest import Manifest

DEFAULT_AUTHORITY_ORDER: tuple[str, ...] = (
    "canonical",
    "official",
    "primary",
    "reviewed",
    "secondary",
    "internal",
    "unknown",
)
DEDUP_KEYS: tuple[Literal["sourceId", "canonicalUri", "revision", "checksum", "locator"], ...] = (
    "sourceId",
    "canonicalUri",
    "revision",
    "checksum",
    "locator",
)
DETERMINISTIC_PRIORITY_ORDER: tuple[
    Literal[
        "scope",
        "authority",
        "exact-support",
        "lane-rank",
        "semantic-relevance",
        "relationship-support",
        "freshness",
    ],
    ...,
] = (
    "scope",
    "authority",
    "exact-support",
    "lane-rank",
    "semantic-relevance",
    "relationship-support",
    "freshness",
)
RRF_PRIORITY_ORDER: tuple[Literal["scope", "lane-rank"], ...] = ("scope", "lane-rank")
# When two lanes hold the same chunk, the row kept as representative is the one from the
# lane whose support is most specific.
LANE_PREFERENCE: tuple[str, ...] = ("exact", "qmd-lexical", "qmd-semantic", "graphify-relationship", "other")
_FRESHNESS_ORDER = {"current": 0, "unknown": 1}
_SCOPE_ORDER = {"in-scope": 0, "explicit-expansion": 1}
_EXPANSION_POLICY_REF = "project-retrieval-manifest:neighborExpansion"


class FusionError(ValueError):
    """Fusion parameters that cannot be applied."""


@dataclass(frozen=True, slots=True)
class FusionSettings:
    """The fusion parameters in force; recorded verbatim in the Fusion record."""

    method: FusionMethod = "deterministic-priority"
    rrf_k: int = 60
    per_source_cap: int = 2
    max_rows: int = 20
    diversity_fields: tuple[
        Literal["sourceId", "sourceType", "collection", "authority", "projectScope"], ...
    ] = (
        "sourceId",
        "sourceType",
        "collection",
        "authority",
    )
    unique_sources_when_available: int = 5
    authority_order: tuple[str, ...] = DEFAULT_AUTHORITY_ORDER

    def __post_init__(self) -> None:
        if self.method not in ("deterministic-priority", "rrf"):
            raise FusionError(f"unknown fusion method {self.method!r}; use deterministic-priority or rrf")
        if self.rrf_k < 1 or self.per_source_cap < 1 or self.max_rows < 1:
            raise FusionError("rrf k, per-source cap and max rows must be positive")

    @classmethod
    def from_manifest(cls, manifest: Manifest, **overrides: object) -> FusionSettings:
        """Settings from the manifest's fusion and ranking policy; keyword overrides win.

        A ``max_rows`` below the manifest's final rows keeps the manifest's share of rows that
        must come from distinct sources, rounded up, unless ``unique_sources_when_available`` is
        given too: 5 unique sources in 20 final rows become 1 in 3, so that a cut to a few rows
        keeps the best candidates (the per-source cap still bounds any one source) instead of
        the first candidate of each of 3 sources, however weak.
        """
        policy = manifest.fusion
        known_fields = {"sourceId", "sourceType", "collection", "authority", "projectScope"}
        settings = cls(
            method=policy.method,
            rrf_k=policy.rrf_default_k,
            per_source_cap=policy.caps.per_source,
            max_rows=policy.caps.final_rows,
            diversity_fields=tuple(name for name in policy.diversity.fields if name in known_fields),  # type: ignore[misc]
            unique_sources_when_available=policy.diversity.require_unique_sources_when_available,
            authority_order=tuple(manifest.ranking_policy.authority_order),
        )
        rows = overrides.get("max_rows")
        if (
            isinstance(rows, int)
            and 0 < rows < settings.max_rows
            and "unique_sources_when_available" not in overrides
        ):
            share = settings.unique_sources_when_available * rows / settings.max_rows
            overrides = {**overrides, "unique_sources_when_available": math.ceil(share)}
        return replace(settings, **overrides)  # type: ignore[arg-type]

    def parameters(self) -> dict[str, object]:
        parameters: dict[str, object] = {
            "authorityOrder": list(self.authority_order),
            "uniqueSourcesWhenAvailable": self.unique_sources_when_available,
            "capsAppliedAfterDedup": True,
            "freshnessIsTieBreakerOnly": True,
        }
        if self.method == "rrf":
            parameters["k"] = self.rrf_k
            parameters["eligibleLanes"] = list(LANE_PREFERENCE[:4])
        return parameters


@dataclass(frozen=True, slots=True)
class ExcludedCandidate:
    """One candidate that did not become a winner, with its contract exclusion reason."""

    row: EvidenceRow
    reason: ExclusionReason
    notes: str

    def record(self) -> ExcludedRow:
        return ExcludedRow(evidence_id=self.row.evidence_id, reason=self.reason, notes=self.notes)

    def log_detail(self) -> dict[str, object]:
        """What the rejected-candidates log keeps of this exclusion.

        A denied row is logged by reason only: no lane, rank or locator of it is kept (E11, §9).
        """
        if self.reason == "denied":
            return {"notes": self.notes}
        return {
            "notes": self.notes,
            "lane": self.row.retrieval.lane,
            "laneRank": self.row.retrieval.rank,
            "locator": self.row.scope.locator.value,
        }


@dataclass(slots=True)
class _Item:
    """A deduplicated candidate: the representative row plus every lane's rank for it."""

    row: EvidenceRow
    lane_ranks: dict[str, int] = field(default_factory=dict)

    @property
    def source_id(self) -> str:
        return self.row.source.source_id

    @property
    def best_rank(self) -> int:
        return min(self.lane_ranks.values())


@dataclass(frozen=True, slots=True)
class FusionResult:
    fusion: Fusion
    winners: tuple[EvidenceRow, ...]
    excluded: tuple[ExcludedCandidate, ...]


def dedup_key(row: EvidenceRow) -> tuple[str, str, str, str, str]:
    """E8 identity of a candidate: same source, revision, checksum and locator collapse."""
    version = row.source.version
    locator = row.scope.locator
    return (
        row.source.source_id,
        row.source.canonical_uri,
        version.revision,
        version.checksum or "",
        f"{locator.type}:{locator.value}",
    )


def fuse(candidates: Iterable[EvidenceRow], settings: FusionSettings | None = None) -> FusionResult:
    """Fuse lane candidates into ordered winners plus recorded exclusions."""
    settings = settings or FusionSettings()
    excluded: list[ExcludedCandidate] = []
    eligible = _scope_gate(candidates, excluded)
    items = _deduplicate(eligible, excluded)
    ordered, tie_breaks = _order(items, settings)
    capped = _apply_source_cap(ordered, settings.per_source_cap, excluded)
    diverse = _diversify(capped, settings.unique_sources_when_available)
    selected = diverse[: settings.max_rows]
    for item in diverse[settings.max_rows :]:
        excluded.append(
            ExcludedCandidate(item.row, "other", f"max-rows: beyond the {settings.max_rows} final rows")
        )

    contributions: list[FusionContribution] = []
    winners: list[EvidenceRow] = []
    for final_rank, item in enumerate(selected, start=1):
        value = _contribution(item, settings)
        contributions.append(
            FusionContribution(
                evidence_id=item.row.evidence_id,
                lane_ranks=dict(item.lane_ranks),
                contribution=value,
                final_rank=final_rank,
                tie_break_reason=tie_breaks.get(item.row.evidence_id),
            )
        )
        retrieval = item.row.retrieval.model_copy(
            update={"fusion_method": settings.method, "fusion_contribution": value}
        )
        winners.append(item.row.model_copy(update={"retrieval": retrieval}))

    record = Fusion(
        method=settings.method,
        parameters=settings.parameters(),
        priority_order=DETERMINISTIC_PRIORITY_ORDER
        if settings.method == "deterministic-priority"
        else RRF_PRIORITY_ORDER,
        dedup_keys=DEDUP_KEYS,
        per_source_cap=settings.per_source_cap,
        max_rows=settings.max_rows,
        diversity_fields=settings.diversity_fields,
        contributions=tuple(contributions),
        excluded_rows=tuple(candidate.record() for candidate in excluded),
    )
    return FusionResult(fusion=record, winners=tuple(winners), excluded=tuple(excluded))


def _scope_gate(candidates: Iterable[EvidenceRow], excluded: list[ExcludedCandidate]) -> list[EvidenceRow]:
    eligible: list[EvidenceRow] = []
    for row in candidates:
        decision = row.scope.scope_decision
        if decision in ("denied", "out-of-scope"):
            excluded.append(ExcludedCandidate(row, decision, f"scope decision {decision}"))
        elif row.freshness.state in ("stale", "superseded") or row.verification.state == "stale":
            excluded.append(ExcludedCandidate(row, "stale", f"freshness {row.freshness.state}"))
        elif row.verification.state == "rejected":
            excluded.append(ExcludedCandidate(row, "other", "row already rejected"))
        else:
            eligible.append(row)
    return eligible


def _lane_preference(lane: str) -> int:
    return LANE_PREFERENCE.index(lane) if lane in LANE_PREFERENCE else len(LANE_PREFERENCE)


def _deduplicate(rows: Sequence[EvidenceRow], excluded: list[ExcludedCandidate]) -> list[_Item]:
    groups: dict[tuple[str, str, str, str, str], list[EvidenceRow]] = {}
    for row in rows:
        groups.setdefault(dedup_key(row), []).append(row)
    items: list[_Item] = []
    for members in groups.values():
        members.sort(key=lambda row: (_lane_preference(row.retrieval.lane), row.retrieval.rank))
        best, *duplicates = members
        item = _Item(row=best)
        for row in members:
            lane = row.retrieval.lane
            item.lane_ranks[lane] = min(item.lane_ranks.get(lane, row.retrieval.rank), row.retrieval.rank)
        for row in duplicates:
            if row.evidence_id == best.evidence_id:
                # The same chunk from another lane: one evidence ID, merged into the item, whose
                # lane ranks record both lanes. It is not a candidate that lost.
                continue
            excluded.append(
                ExcludedCandidate(
                    row,
                    "duplicate",
                    f"same source, revision and locator as the {best.retrieval.lane} rank "
                    f"{best.retrieval.rank} row; lane trace kept in its contribution",
                )
            )
        items.append(item)
    return items


_ABSENT_RANK = 1_000_000


def _priority_key(
    item: _Item, settings: FusionSettings
) -> tuple[int, int, int, tuple[int, ...], int, int, int, str]:
    row = item.row
    authority = (
        settings.authority_order.index(row.authority.level)
        if row.authority.level in settings.authority_order
        else len(settings.authority_order)
    )
    # Lane rank compares the item's ranks best-first: (1, 3) before (1, 40) before (1, absent).
    ranks = sorted(item.lane_ranks.values())
    rank_vector = tuple(ranks + [_ABSENT_RANK] * (len(LANE_PREFERENCE) - len(ranks)))
    return (
        _SCOPE_ORDER.get(row.scope.scope_decision, 2),
        authority,
        0 if "exact" in item.lane_ranks else 1,
        rank_vector,
        0 if "qmd-semantic" in item.lane_ranks else 1,
        0 if "graphify-relationship" in item.lane_ranks else 1,
        _FRESHNESS_ORDER.get(row.freshness.state, 2),
        row.evidence_id,
    )


_PRIORITY_KEY_NAMES = (
    "scope",
    "authority",
    "exact-support",
    "lane-rank",
    "semantic-relevance",
    "relationship-support",
    "freshness",
    "evidence-id",
)


def _rrf_score(item: _Item, k: int) -> float:
    return sum(1.0 / (k + rank) for rank in item.lane_ranks.values())


def _order(items: list[_Item], settings: FusionSettings) -> tuple[list[_Item], dict[str, str]]:
    """Order items and name, for each, the first key that placed it after its predecessor."""
    tie_breaks: dict[str, str] = {}
    keyed: list[tuple[tuple[object, ...], _Item]]
    if settings.method == "rrf":
        keyed = [((-_rrf_score(item, settings.rrf_k), item.row.evidence_id), item) for item in items]
        names: tuple[str, ...] = ("rrf-score", "evidence-id")
    else:
        keyed = [(_priority_key(item, settings), item) for item in items]
        names = _PRIORITY_KEY_NAMES
    keyed.sort(key=lambda pair: pair[0])
    for (previous_key, _), (key, item) in itertools.pairwise(keyed):
        deciding = next(
            (name for name, a, b in zip(names, previous_key, key, strict=True) if a != b), "identical-keys"
        )
        tie_breaks[item.row.evidence_id] = f"after previous winner by {deciding}"
    return [item for _, item in keyed], tie_breaks


def _apply_source_cap(items: list[_Item], cap: int, excluded: list[ExcludedCandidate]) -> list[_Item]:
    kept: list[_Item] = []
    per_source: dict[str, int] = {}
    for item in items:
        count = per_source.get(item.source_id, 0)
        if count >= cap:
            excluded.append(ExcludedCandidate(item.row, "source-cap", f"per-source cap {cap} reached"))
            continue
        per_source[item.source_id] = count + 1
        kept.append(item)
    return kept


def _diversify(items: list[_Item], unique_sources: int) -> list[_Item]:
    """Promote each source's first item until `unique_sources` distinct sources lead the list."""
    if unique_sources <= 0:
        return items
    leading: list[_Item] = []
    seen: set[str] = set()
    for item in items:
        if item.source_id not in seen and len(seen) < unique_sources:
            seen.add(item.source_id)
            leading.append(item)
    promoted = {id(item) for item in leading}
    return leading + [item for item in items if id(item) not in promoted]


def _contribution(item: _Item, settings: FusionSettings) -> float:
    if settings.method == "rrf":
        return _rrf_score(item, settings.rrf_k)
    # Deterministic priority orders by keys, not by a number; the recorded value is the
    # reciprocal of the best lane rank, the one numeric key that entered the ordering.
    return 1.0 / item.best_rank


@dataclass(frozen=True, slots=True)
class NeighbourContext:
    """Adjacent text of a winner, from the blocks next to its chunk in the same source."""

    before: str
    after: str


def expand_winners(
    winners: Sequence[EvidenceRow],
    neighbours: Callable[[EvidenceRow, int, int], NeighbourContext | None],
    manifest: Manifest | None = None,
    *,
    max_winners: int = 5,
    before_blocks: int = 1,
    after_blocks: int = 1,
    max_bytes: int = 6000,
) -> tuple[EvidenceRow, ...]:
    """Attach before/after context to the first `max_winners` winners only (E9).

    The row's scope locator is untouched; the expansion records that same locator.
    """
    if manifest is not None:
        policy = manifest.neighbor_expansion
        if not policy.enabled:
            return tuple(winners)
        max_winners = policy.max_winners
        before_blocks = policy.before_blocks
        after_blocks = policy.after_blocks
        max_bytes = policy.max_bytes_per_winner
    expanded: list[EvidenceRow] = []
    for position, row in enumerate(winners):
        context = neighbours(row, before_blocks, after_blocks) if position < max_winners else None
        if context is None or not (context.before or context.after):
            expanded.append(row)
            continue
        before, after = _bounded(context.before, context.after, max_bytes)
        content = row.content.model_copy(
            update={
                "before": before,
                "after": after,
                "context_expansion": ContextExpansion(
                    policy_ref=_EXPANSION_POLICY_REF,
                    bytes_added=len(before.encode("utf-8")) + len(after.encode("utf-8")),
                    locator=row.scope.locator,
                ),
            }
        )
        expanded.append(row.model_copy(update={"content": content}))
    return tuple(expanded)


def _bounded(before: str, after: str, max_bytes: int) -> tuple[str, str]:
    """Trim context to `max_bytes` in total, keeping the text nearest the match."""
    half = max_bytes // 2
    before_bytes = before.encode("utf-8")
    after_bytes = after.encode("utf-8")
    before_budget = min(len(before_bytes), max(half, max_bytes - len(after_bytes)))
    after_budget = min(len(after_bytes), max_bytes - before_budget)
    trimmed_before = before_bytes[len(before_bytes) - before_budget :].decode("utf-8", errors="ignore")
    trimmed_after = after_bytes[:after_budget].decode("utf-8", errors="ignore")
    return trimmed_before, trimmed_after
