"""Probes 3, 4, 6, 7 and the smaller ingest ones: hostile names, file kinds, links and manifests.

Each ends in bounded time with the good files ingested and the hostile ones counted (never
named), or with a clear message and exit 2; none leaves a traceback.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from akm.cli import main
from akm.config import DEFAULT_MANIFEST_FILE
from akm.embedding import HashingEmbedder
from akm.ingest import ingest
from akm.manifest import ManifestError, load_manifest
from akm.store import EvidenceStore, open_store

from .conftest import akm_environment, assert_no_traceback, run_akm

pytestmark = pytest.mark.reliability

GOOD = "# Good\n\nA good file about quasars.\n"


def _manifest(project: Path, **changes: Any) -> Path:
    document = yaml.safe_load(DEFAULT_MANIFEST_FILE.read_text(encoding="utf-8"))
    document["projectRoot"] = "."
    document["sourceRefs"][0]["rootPath"] = "docs"
    document.update(changes)
    path = project / "manifest.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "good.md").write_text(GOOD, encoding="utf-8")
    (root / "docs" / "other.md").write_text("# Other\n\nAnother good file.\n", encoding="utf-8")
    _manifest(root)
    return root


@pytest.fixture
def store(tmp_path: Path) -> Any:
    opened = open_store(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    yield opened
    opened.close()


def _current(store: EvidenceStore) -> list[str]:
    return sorted(source_id for source_id, state in store.source_states("docs").items() if not state.deleted)


def test_a_name_that_is_not_utf8_is_counted_and_the_good_files_are_ingested(
    project: Path, store: EvidenceStore
) -> None:
    bad = os.path.join(os.fsencode(project / "docs"), b"caf\xe9-zebra.md")
    with open(bad, "wb") as stream:
        stream.write(b"# Zebra\n\nsecret zebra\n")
    os.mkdir(os.path.join(os.fsencode(project / "docs"), b"dir-\xff"))
    report = ingest(store, load_manifest(project / "manifest.yaml"), embedder=HashingEmbedder())
    assert report.denied == {"non-utf8-name": 2}
    assert _current(store) == ["akm:docs:good.md", "akm:docs:other.md"]
    assert not any("zebra" in line for line in report.summary_lines())


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_fifo_in_the_tree_and_as_a_path_never_blocks(project: Path, tmp_path: Path) -> None:
    os.mkfifo(project / "docs" / "pipe.md")
    environment = akm_environment(tmp_path / "data", project / "manifest.yaml", tmp_path / "cli.sqlite3")
    walked = run_akm(["ingest", "--quiet", "--json"], environment, timeout=60)
    assert_no_traceback(walked)
    assert walked.code == 0, walked.stderr
    assert '"not-a-regular-file": 1' in walked.stdout
    named = run_akm(["ingest", "--quiet", "--json", "docs/pipe.md"], environment, timeout=60)
    assert_no_traceback(named)
    assert named.code == 0, named.stderr
    assert '"not-a-regular-file": 1' in named.stdout


def test_a_hard_link_to_a_file_outside_the_root_is_not_ingested(
    project: Path, store: EvidenceStore, tmp_path: Path
) -> None:
    outside = tmp_path / "outside-secret.md"
    outside.write_text("# Secret\n\nzebra password\n", encoding="utf-8")
    os.link(outside, project / "docs" / "linked-zebra.md")
    report = ingest(store, load_manifest(project / "manifest.yaml"), embedder=HashingEmbedder())
    assert report.denied == {"hard-link": 1}
    assert _current(store) == ["akm:docs:good.md", "akm:docs:other.md"]
    assert store.find_sources("zebra") == []
    assert store.lexical_search("password", 5) == []


def test_symlinks_stay_denied(project: Path, store: EvidenceStore, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\n\nzebra\n", encoding="utf-8")
    os.symlink(outside, project / "docs" / "link-zebra.md")
    report = ingest(store, load_manifest(project / "manifest.yaml"), embedder=HashingEmbedder())
    assert report.denied == {"symlink": 1}
    assert store.lexical_search("zebra", 5) == []


@pytest.mark.parametrize("root", ["/", "../../../../..", "/etc", "..\\..\\..\\..", "docs/../../.."])
def test_a_project_root_that_escapes_is_refused(project: Path, root: str) -> None:
    with pytest.raises(ManifestError, match="projectRoot"):
        load_manifest(_manifest(project, projectRoot=root))


def test_a_project_root_linked_outside_is_refused(project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path.parent
    os.symlink(elsewhere, project / "up")
    with pytest.raises(ManifestError, match="outside"):
        load_manifest(_manifest(project, projectRoot="up"))


def test_a_missing_project_root_is_an_error_not_an_empty_ingest(project: Path) -> None:
    with pytest.raises(ManifestError, match="does not exist"):
        load_manifest(_manifest(project, projectRoot="no-such-folder"))


def test_the_parent_of_a_config_folder_is_still_a_project_root(tmp_path: Path) -> None:
    (tmp_path / "checkout" / "config").mkdir(parents=True)
    (tmp_path / "checkout" / "docs").mkdir()
    config = tmp_path / "checkout" / "config"
    document = yaml.safe_load(DEFAULT_MANIFEST_FILE.read_text(encoding="utf-8"))
    (config / "manifest.yaml").write_text(yaml.safe_dump(document), encoding="utf-8")
    assert load_manifest(config / "manifest.yaml").project_root == (tmp_path / "checkout").resolve()


def test_a_path_that_names_nothing_is_an_error(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--manifest", str(project / "manifest.yaml"), "--database-url", f"sqlite:///{tmp_path / 'x.db'}"]
    assert main([*argv, "ingest", "--embedder", "hashing", "--quiet", "docs/nope.md"]) == 2
    assert "docs/nope.md: no such file or folder" in capsys.readouterr().err
    # A stored source that was deleted is still a valid path: it is marked deleted, exit 0.
    assert main([*argv, "ingest", "--embedder", "hashing", "--quiet"]) == 0
    (project / "docs" / "other.md").unlink()
    assert main([*argv, "ingest", "--embedder", "hashing", "--quiet", "docs/other.md"]) == 0


def test_a_relative_manifest_is_read_from_the_working_directory(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(project)
    database = ["--database-url", f"sqlite:///{tmp_path / 'cli.sqlite3'}"]
    assert main(["--manifest", "manifest.yaml", *database, "ingest", "--embedder", "hashing", "--quiet"]) == 0
    assert "ingested 2" in capsys.readouterr().out
    assert main(["--manifest", "nope.yaml", *database, "ingest", "--embedder", "hashing", "--quiet"]) == 2
    assert str(project / "nope.yaml") in capsys.readouterr().err
