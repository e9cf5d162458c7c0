"""Hand-built candidate rows and the upstream schema validator for fusion tests."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from akm.contract.builders import build_candidate_row
from akm.contract.ids import sha256_text
from akm.contract.models import Authority, EvidenceRow, Freshness, Locator

MOMENT = "2026-11-29T00:00:00.000Z"

RowFactory = Callable[..., EvidenceRow]


@pytest.fixture
def make_row() -> RowFactory:
    def factory(
        source: str,
        lane: str,
        rank: int,
        *,
        chunk: int = 1,
        authority: str = "canonical",
        freshness: str = "current",
        scope_decision: str = "in-scope",
        excerpt: str | None = None,
    ) -> EvidenceRow:
        path = f"docs/{source}.md"
        return build_candidate_row(
            source_id=f"akm:docs:{path}",
            canonical_uri=f"file:{path}",
            canonical_path=path,
            source_type="markdown",
            classification="public",
            project_scopes=["akm-evidence"],
            revision="sha256:0123456789abcdef",
            checksum_algorithm="sha256",
            checksum=sha256_text(source),
            project_id="akm-evidence",
            manifest_id="akm-evidence-docs",
            manifest_version="1.0.0",
            collection="akm-evidence",
            locator=Locator(
                type="line-range",
                value=f"{path}:{chunk * 10}-{chunk * 10 + 4}",
                start_line=chunk * 10,
                end_line=chunk * 10 + 4,
            ),
            authority=Authority(level=authority, rationale="test authority", policy_ref="test-policy"),  # type: ignore[arg-type]
            freshness=Freshness(
                state=freshness, checked_at=MOMENT, policy_ref="test-freshness", reason="test"
            ),  # type: ignore[arg-type]
            lane=lane,  # type: ignore[arg-type]
            query="test query",
            rank=rank,
            result_set_id=f"rs:{lane}",
            parameters={"limit": 10},
            excerpt=excerpt or f"{source} chunk {chunk}",
            scope_decision=scope_decision,  # type: ignore[arg-type]
            raw_score=1.0 / rank,
            raw_score_meaning="test score, higher is better",
            at=MOMENT,
        )

    return factory
