"""A small project on disk: a manifest plus a docs/ root with allowed and denied files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from akm.config import DEFAULT_MANIFEST_FILE
from akm.manifest import Manifest, load_manifest

DEFAULT_MANIFEST = DEFAULT_MANIFEST_FILE

GUIDE = """\
# Guide

Intro paragraph one.
Still intro.

## Install

Run the installer.

### Offline

Copy the wheel.

## Use

See [the reference](reference.md#top) and [[Notes]].
"""

REFERENCE = "# Reference\n\nThe reference text mentions quasars.\n"
NOTES = "Plain notes without headings.\n\nSecond paragraph about nebulae.\n"

# Files that must never be opened, one per denial reason (names are checked against output).
DENIED_FILES = {
    "private/plan-zebra.md": "denied-path-token",
    "team-secret-zebra.md": "denied-basename-token",
    "diagram-zebra.png": "denied-extension",
    "todo-zebra.html": "not-included",
}


def write_manifest(project: Path, *, restricted_ref: bool = False, **changes: Any) -> Path:
    document = yaml.safe_load(DEFAULT_MANIFEST.read_text(encoding="utf-8"))
    document["projectRoot"] = "."
    ref = document["sourceRefs"][0]
    ref["rootPath"] = "docs"
    if restricted_ref:
        # The project schema refuses private source refs; the loader's own check still counts them.
        restricted = dict(
            ref, sourceId="fixture:restricted", classification="private", include=["restricted-area/**"]
        )
        document["sourceRefs"] = [restricted, ref]
    document.update(changes)
    path = project / "manifest.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """docs/ with three allowed Markdown files and one of each denied kind."""
    root = tmp_path / "project"
    docs = root / "docs"
    docs.mkdir(parents=True)
    (docs / "guide.md").write_text(GUIDE, encoding="utf-8")
    (docs / "reference.md").write_text(REFERENCE, encoding="utf-8")
    (docs / "notes.md").write_text(NOTES, encoding="utf-8")
    for relative in DENIED_FILES:
        (docs / relative).parent.mkdir(parents=True, exist_ok=True)
        (docs / relative).write_text("# Zebra\n\nsecret zebra content\n", encoding="utf-8")
    os.symlink(docs / "reference.md", docs / "link-zebra.md")
    nested = docs / "vendored-zebra"
    (nested / ".git").mkdir(parents=True)
    (nested / "inside.md").write_text("# Nested\n", encoding="utf-8")
    (docs / "front-zebra.md").write_text("---\nclassification: private\n---\n# Front\n", encoding="utf-8")
    (root / "outside-zebra.md").write_text("# Outside\n", encoding="utf-8")
    write_manifest(root)
    return root


@pytest.fixture
def manifest(project: Path) -> Manifest:
    return load_manifest(project / "manifest.yaml", check_schema=False)


def run_ingest_command(argv: list[str], **settings: Any) -> int:
    """Run ``akm ingest ARGV`` through its own parser only, so other commands' imports stay out."""
    import argparse

    from akm.cli.ingest import register
    from akm.settings import load_settings

    parser = argparse.ArgumentParser(prog="akm")
    register(parser.add_subparsers())
    args = parser.parse_args(["ingest", *argv])
    return int(args.handler(args, load_settings(**settings)))
