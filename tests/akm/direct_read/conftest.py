"""A small source tree and candidate rows pointing into it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from akm.contract.builders import build_candidate_row
from akm.contract.ids import sha256_file
from akm.contract.models import Authority, EvidenceRow, Freshness, Locator

MOMENT = "2026-11-29T00:00:00.000Z"
GUIDE = "# Guide\n\nIntro line.\n\n## Install\n\nRun make install.\nThen make test.\n\n## Use\n\nAsk a question.\n"


@pytest.fixture
def source_root(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "guide.md").write_text(GUIDE, encoding="utf-8")
    (tmp_path / "outside.md").write_text("outside the root\n", encoding="utf-8")
    return root


@pytest.fixture
def candidate_for(source_root: Path) -> Callable[..., EvidenceRow]:
    def factory(path: str = "docs/guide.md", locator: Locator | None = None) -> EvidenceRow:
        checksum = sha256_file(source_root / path)
        return build_candidate_row(
            source_id=f"akm:docs:{path}",
            canonical_uri=f"file:{path}",
            canonical_path=path,
            source_type="markdown",
            classification="public",
            project_scopes=["akm-evidence"],
            revision=f"sha256:{checksum[:16]}",
            checksum_algorithm="sha256",
            checksum=checksum,
            project_id="akm-evidence",
            manifest_id="akm-evidence-docs",
            manifest_version="1.0.0",
            collection="akm-evidence",
            locator=locator or Locator(type="line-range", value=f"{path}:7-8", start_line=7, end_line=8),
            authority=Authority(level="canonical", rationale="project documentation", policy_ref="manifest"),
            freshness=Freshness(state="current", checked_at=MOMENT, policy_ref="freshness", reason="indexed"),
            lane="qmd-lexical",
            query="make install",
            rank=1,
            result_set_id="rs:test",
            parameters={"limit": 10},
            excerpt="Run make install.\nThen make test.",
            at=MOMENT,
        )

    return factory
