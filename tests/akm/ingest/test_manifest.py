"""Project manifest loading, validation errors and path predicates."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
import yaml

from akm.config import DEFAULT_MANIFEST_FILE
from akm.manifest import DenialReason, ManifestError, glob_matches, load_manifest

DEFAULT_MANIFEST = DEFAULT_MANIFEST_FILE


def test_default_manifest_loads_with_checksum_and_policies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The bundled default belongs to no project: it scopes docs/ of the working directory.
    monkeypatch.chdir(tmp_path)
    manifest = load_manifest(DEFAULT_MANIFEST)
    assert manifest.sha256 == hashlib.sha256(DEFAULT_MANIFEST.read_bytes()).hexdigest()
    assert manifest.project_root == tmp_path.resolve()
    assert manifest.root_aliases() == {"docs": tmp_path.resolve() / "docs"}
    assert manifest.scope.default_decision == "deny"
    assert manifest.fusion.method == "deterministic-priority"
    assert manifest.fusion.rrf_default_k == 60
    assert (manifest.fusion.caps.per_source, manifest.fusion.caps.final_rows) == (4, 20)
    assert manifest.neighbor_expansion.enabled is True
    assert "number" in manifest.verification_policy.important_claim_classes
    assert manifest.ranking_policy.priority_order[:2] == ("scope-match", "authority")


def test_a_copy_of_the_default_manifest_belongs_to_the_folder_it_is_copied_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    (project / "config").mkdir(parents=True)
    copy = project / "config" / "manifest.yaml"
    copy.write_bytes(DEFAULT_MANIFEST.read_bytes())
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    manifest = load_manifest(copy)
    assert manifest.project_root == project.resolve()
    assert manifest.sha256 == load_manifest(DEFAULT_MANIFEST).sha256


def _write(tmp_path: Path, document: dict[str, Any]) -> Path:
    path = tmp_path / "manifest.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return path


def _document() -> dict[str, Any]:
    loaded = yaml.safe_load(DEFAULT_MANIFEST.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def _set_cap(doc: dict[str, Any]) -> None:
    doc["fusion"]["caps"]["perSource"] = 0


def _drop_id(doc: dict[str, Any]) -> None:
    del doc["manifestId"]


def _escape_root(doc: dict[str, Any]) -> None:
    doc["sourceRefs"][0]["rootPath"] = "../elsewhere"


def _bare_extension(doc: dict[str, Any]) -> None:
    doc["security"]["denyExtensions"] = ["db"]


def _authority_first(doc: dict[str, Any]) -> None:
    doc["rankingPolicy"]["priorityOrder"] = ["authority", "scope-match"]


def _bad_method(doc: dict[str, Any]) -> None:
    doc["fusion"]["method"] = "average-scores"


def _candidate_supports(doc: dict[str, Any]) -> None:
    doc["verificationPolicy"]["candidateMaySupportClaim"] = True


def _bad_version(doc: dict[str, Any]) -> None:
    doc["manifestVersion"] = "one"


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (_set_cap, "fusion.caps.perSource"),
        (_drop_id, "manifestId"),
        (_escape_root, "sourceRefs.0.rootPath"),
        (_bare_extension, "security.denyExtensions"),
        (_authority_first, "rankingPolicy.priorityOrder"),
        (_bad_method, "fusion.method"),
        (_candidate_supports, "verificationPolicy.candidateMaySupportClaim"),
        (_bad_version, "manifestVersion"),
    ],
    ids=[
        "cap-zero",
        "missing-id",
        "escaping-root",
        "extension-without-dot",
        "authority-first",
        "method",
        "candidate-support",
        "version",
    ],
)
def test_broken_manifest_names_the_field(tmp_path: Path, mutate: Any, field: str) -> None:
    document = _document()
    mutate(document)
    with pytest.raises(ManifestError) as raised:
        load_manifest(_write(tmp_path, document), check_schema=False)
    assert raised.value.field == field
    assert f"'{field}'" in str(raised.value)


@pytest.mark.parametrize(
    ("content", "field"),
    [("fusion: [unclosed", "(file)"), ("- a list\n", "(root)")],
    ids=["yaml-syntax", "not-a-mapping"],
)
def test_unreadable_manifest(tmp_path: Path, content: str, field: str) -> None:
    path = tmp_path / "manifest.yaml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ManifestError) as raised:
        load_manifest(path)
    assert raised.value.field == field


def test_missing_manifest_file(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="cannot read manifest"):
        load_manifest(tmp_path / "absent.yaml")


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/etc/passwd", DenialReason.ABSOLUTE_PATH),
        ("C:/Users/x.md", DenialReason.ABSOLUTE_PATH),
        ("../outside.md", DenialReason.ESCAPING_PATH),
        ("docs/a/../../x.md", DenialReason.ESCAPING_PATH),
        ("docs/private/plan.md", DenialReason.DENIED_PATH_TOKEN),
        ("private/plan.md", DenialReason.DENIED_PATH_TOKEN),
        ("docs/my-secret.md", DenialReason.DENIED_BASENAME_TOKEN),
        ("docs/.env", DenialReason.DENIED_BASENAME_TOKEN),
        ("docs/picture.PNG", DenialReason.DENIED_EXTENSION),
        ("docs/store.sqlite3", DenialReason.DENIED_EXTENSION),
        ("docs/guide.md", None),
    ],
    ids=[
        "absolute",
        "windows-absolute",
        "parent",
        "parent-inside",
        "path-token",
        "top-level-token",
        "basename-token",
        "dotenv",
        "extension-case",
        "sqlite",
        "allowed",
    ],
)
def test_denial_for_path(path: str, reason: DenialReason | None) -> None:
    manifest = load_manifest(DEFAULT_MANIFEST)
    assert manifest.denial_for_path(path) == reason
    assert manifest.is_denied(path) is (reason is not None)


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("**/*.md", "a.md", True),
        ("**/*.md", "x/y/a.md", True),
        ("*.md", "x/a.md", False),
        ("99-system/*.md", "99-system/a.md", True),
        ("**/*private*", "notes/private-plan.md", True),
        ("**/*.md", "a.mdx", False),
    ],
    ids=["top", "nested", "star-one-level", "folder", "infix", "suffix-anchor"],
)
def test_glob_matches(pattern: str, path: str, expected: bool) -> None:
    assert glob_matches(pattern, path) is expected


def test_classification_predicates() -> None:
    manifest = load_manifest(DEFAULT_MANIFEST)
    assert manifest.classification_allowed("public")
    assert manifest.classification_allowed("non-sensitive")
    assert not manifest.classification_allowed("private")
    assert not manifest.classification_allowed("unknown")
