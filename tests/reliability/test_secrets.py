"""Secret extraction probes: a secret in a denied file never reaches the store or an answer.

Denied files (by path token, basename token, front-matter classification, a hard link or a
symlink to them) are counted only; asking for the secret by its name or its value finds nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from akm.embedding import HashingEmbedder
from akm.ingest import ingest
from akm.manifest import load_manifest
from akm.store import open_store
from tests.plugins.corpus import Corpus

pytestmark = pytest.mark.reliability

SECRET = "zq-secret-4242-xyzzy"


def _plant(root: Path) -> None:
    docs = root / "docs"
    (docs / "private").mkdir()
    (docs / "private" / "plan.md").write_text(f"# Plan\n\nThe vault code is {SECRET}.\n", encoding="utf-8")
    (docs / "password-list.md").write_text(f"# Passwords\n\nadmin: {SECRET}\n", encoding="utf-8")
    (docs / "memo.md").write_text(
        f"---\nclassification: private\n---\n# Memo\n\nThe memo code is {SECRET}.\n", encoding="utf-8"
    )
    os.symlink("password-list.md", docs / "linked-notes.md")


def test_a_denied_secret_never_enters_the_store_or_an_answer(corpus: Corpus) -> None:
    from akm.answer import AnswerOptions, answer

    _plant(corpus.root)
    report = ingest(
        corpus.store, load_manifest(corpus.root / "config" / "manifest.yaml"), embedder=HashingEmbedder()
    )
    assert report.denied_total >= 4
    # The questions name what the secret is, never its value (a question is echoed in its packet).
    for question in (
        "What is the vault code in the private plan?",
        "admin password",
        "What is the memo code?",
    ):
        result = answer(
            question,
            AnswerOptions(max_rows=4),
            store=corpus.store,
            manifest=corpus.manifest,
            embedder=corpus.embedder,
            generator=corpus.generator("I cannot say."),
        )
        assert SECRET not in str(result.to_json())
        assert "password-list" not in str(result.to_json())
    database = corpus.store.engine.url.database
    assert database is not None
    corpus.store.close()
    reopened = open_store(f"sqlite:///{database}")
    try:
        assert reopened.find_sources("password") == []
        assert reopened.lexical_search("xyzzy", 10) == []
    finally:
        reopened.close()
    assert SECRET.encode() not in Path(database).read_bytes()
