"""The project retrieval manifest: scope, security deny rules, lanes, ranking and fusion policy.

The file follows the shape of the upstream AKM ``project-retrieval-manifest.yaml`` template.
``load_manifest`` validates it (against ``project-retrieval-manifest.schema.json``, shipped in
``akm/contract/schemas/``, then with the models below) and records the file's sha256, which
every packet must carry. Path predicates here are pure string checks: they decide whether a
path may be opened at all, so they never touch the file system.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from enum import StrEnum
from functools import lru_cache
from importlib.resources import files
from pathlib import Path, PurePosixPath
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from akm.config import DEFAULT_MANIFEST_FILE

# The manifest's JSON Schema ships with the contract schemas, inside the package.
MANIFEST_SCHEMA_RESOURCE = files("akm.contract").joinpath("schemas", "project-retrieval-manifest.schema.json")

Classification = Literal["public", "non-sensitive", "private", "restricted", "unknown"]
LaneName = Literal["exact", "qmd-lexical", "qmd-semantic", "graphify-relationship", "direct-read", "other"]
AuthorityLevel = Literal["canonical", "official", "primary", "reviewed", "secondary", "internal", "unknown"]


# The source ref a corpus ingest files its documents under is ``corpus:<root alias>``.
CORPUS_SOURCE_PREFIX = "corpus:"


class ManifestError(ValueError):
    """A manifest that cannot be used; ``field`` is the dotted path of the offending field."""

    def __init__(self, field: str, reason: str, path: Path | None = None) -> None:
        self.field = field
        self.reason = reason
        self.path = path
        where = f"{path}: " if path is not None else ""
        super().__init__(f"{where}manifest field '{field}': {reason}")


class DenialReason(StrEnum):
    """Why a path was never opened, or why a file that was opened was refused before anything
    of it was stored. Reports count these; they never name the path."""

    ABSOLUTE_PATH = "absolute-path"
    ESCAPING_PATH = "escaping-path"
    SYMLINK = "symlink"
    NESTED_REPOSITORY = "nested-repository"
    DENIED_PATH_TOKEN = "denied-path-token"
    DENIED_BASENAME_TOKEN = "denied-basename-token"
    DENIED_EXTENSION = "denied-extension"
    DENIED_CLASSIFICATION = "denied-classification"
    NOT_INCLUDED = "not-included"
    # A FIFO, device or socket: opening it could block or never end.
    NOT_REGULAR_FILE = "not-a-regular-file"
    # A file with more than one hard link: its other names may lie outside the root.
    HARD_LINK = "hard-link"
    # A name that is not valid UTF-8 cannot be recorded as a source path.
    NON_UTF8_NAME = "non-utf8-name"
    # The extension names no known format, or a format the manifest's allowedContentTypes omits.
    UNKNOWN_CONTENT_TYPE = "unknown-content-type"
    CONTENT_TYPE_NOT_ALLOWED = "content-type-not-allowed"
    # Opened and refused (see akm.ingest.formats): a password-protected PDF, a file its format's
    # reader cannot parse (truncated, damaged), one over a size, page or decompression limit.
    ENCRYPTED = "encrypted"
    CORRUPT = "corrupt"
    OVER_LIMIT = "over-limit"
    # Opened and readable but without any text (a scanned PDF without a text layer). Ingest
    # counts these apart from denials, as "no text".
    NO_TEXT = "no-text"


class _Section(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True, frozen=True)


class ManifestChecksum(_Section):
    algorithm: str
    value: str


class ScopePolicy(_Section):
    default_decision: Literal["deny", "allow"] = Field(alias="defaultDecision")
    allowed_classifications: tuple[Classification, ...] = Field(alias="allowedClassifications")
    denied_classifications: tuple[Classification, ...] = Field(alias="deniedClassifications")
    allowed_content_types: tuple[str, ...] = Field(default=("text/markdown",), alias="allowedContentTypes")
    # Sources an ingest keeps current per target (the manifest's roots together, or one JSONL corpus).
    max_corpus_documents: int | None = Field(default=None, alias="maxCorpusDocuments", ge=1)
    require_relative_paths: bool = Field(default=True, alias="requireRelativePaths")
    reject_parent_traversal: bool = Field(default=True, alias="rejectParentTraversal")
    reject_symlinks: bool = Field(default=True, alias="rejectSymlinks")
    reject_nested_repositories: bool = Field(default=True, alias="rejectNestedRepositories")

    @model_validator(mode="after")
    def _disjoint(self) -> ScopePolicy:
        both = set(self.allowed_classifications) & set(self.denied_classifications)
        if both:
            raise ValueError(f"classifications both allowed and denied: {sorted(both)}")
        return self


class SourceRef(_Section):
    source_id: str = Field(alias="sourceId", min_length=1)
    root_alias: str = Field(alias="rootAlias", min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    root_path: str = Field(alias="rootPath", min_length=1)
    classification: Classification
    include: tuple[str, ...] = Field(min_length=1)
    exclude: tuple[str, ...] = ()
    retrieval_lanes: tuple[LaneName, ...] = Field(alias="retrievalLanes", min_length=1)
    authority_policy: str = Field(alias="authorityPolicy")
    freshness_policy: str = Field(alias="freshnessPolicy")

    @field_validator("root_path")
    @classmethod
    def _relative_root(cls, value: str) -> str:
        if value.startswith("/") or re.match(r"^[A-Za-z]:", value):
            raise ValueError("must be a relative path")
        if ".." in PurePosixPath(value).parts:
            raise ValueError("must not escape the project root with '..'")
        return value

    def includes(self, relative_path: str) -> bool:
        """Whether ``relative_path`` (relative to this ref's root) is included and not excluded."""
        if not any(glob_matches(pattern, relative_path) for pattern in self.include):
            return False
        return not any(glob_matches(pattern, relative_path) for pattern in self.exclude)


class SecurityPolicy(_Section):
    policy_ref: str = Field(alias="policyRef")
    deny_absolute_paths: bool = Field(default=True, alias="denyAbsolutePaths")
    deny_escaping_paths: bool = Field(default=True, alias="denyEscapingPaths")
    deny_path_tokens: tuple[str, ...] = Field(alias="denyPathTokens")
    deny_basename_tokens: tuple[str, ...] = Field(alias="denyBasenameTokens")
    deny_extensions: tuple[str, ...] = Field(alias="denyExtensions")
    deny_source_types: tuple[str, ...] = Field(default=(), alias="denySourceTypes")
    report_denied_sources_as: Literal["count-only"] = Field(alias="reportDeniedSourcesAs")

    @field_validator("deny_extensions")
    @classmethod
    def _dotted(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for extension in value:
            if not extension.startswith("."):
                raise ValueError(f"extension {extension!r} must start with '.'")
        return tuple(extension.lower() for extension in value)


class RankingPolicy(_Section):
    policy_id: str = Field(alias="policyId")
    priority_order: tuple[str, ...] = Field(alias="priorityOrder", min_length=1)
    authority_order: tuple[AuthorityLevel, ...] = Field(alias="authorityOrder", min_length=1)
    freshness_may_override_authority: bool = Field(alias="freshnessMayOverrideAuthority")
    raw_scores_comparable_across_lanes: bool = Field(alias="rawScoresComparableAcrossLanes")

    @field_validator("priority_order")
    @classmethod
    def _scope_first(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if value[:2] != ("scope-match", "authority"):
            raise ValueError("must begin with 'scope-match', 'authority'")
        return value


class FusionCaps(_Section):
    per_source: int = Field(alias="perSource", ge=1)
    final_rows: int = Field(alias="finalRows", ge=1)
    apply_after_dedup: bool = Field(default=True, alias="applyAfterDedup")


class FusionDedup(_Section):
    enabled: bool = True
    keys: tuple[str, ...] = Field(min_length=1)


class FusionDiversity(_Section):
    fields: tuple[str, ...] = ()
    require_unique_sources_when_available: int = Field(
        default=0, alias="requireUniqueSourcesWhenAvailable", ge=0
    )


class FusionPolicy(_Section):
    method: Literal["deterministic-priority", "rrf"]
    optional_comparison_method: Literal["deterministic-priority", "rrf"] | None = Field(
        default=None, alias="optionalComparisonMethod"
    )
    rrf_default_k: int = Field(default=60, alias="rrfDefaultK", ge=1)
    dedup: FusionDedup
    caps: FusionCaps
    diversity: FusionDiversity = FusionDiversity()


class NeighbourExpansion(_Section):
    enabled: bool
    stage: Literal["after-fusion"]
    winner_rows_only: bool = Field(alias="winnerRowsOnly")
    max_winners: int = Field(alias="maxWinners", ge=0)
    before_blocks: int = Field(alias="beforeBlocks", ge=0)
    after_blocks: int = Field(alias="afterBlocks", ge=0)
    max_bytes_per_winner: int = Field(alias="maxBytesPerWinner", ge=0)
    preserve_original_locator: bool = Field(alias="preserveOriginalLocator")


class VerificationPolicy(_Section):
    candidate_may_support_claim: Literal[False] = Field(alias="candidateMaySupportClaim")
    direct_read_required_for_important_claims: bool = Field(alias="directReadRequiredForImportantClaims")
    important_claim_classes: tuple[str, ...] = Field(alias="importantClaimClasses")
    claim_support_requires_claim_ids: Literal[True] = Field(alias="claimSupportRequiresClaimIds")
    unresolved_blocking_conflict_verdict: Literal["HOLD", "FAIL"] = Field(
        alias="unresolvedBlockingConflictVerdict"
    )
    checksum_mismatch_verdict: Literal["HOLD", "FAIL"] = Field(alias="checksumMismatchVerdict")
    required_direct_read_may_be_skipped: Literal[False] = Field(alias="requiredDirectReadMayBeSkipped")


class FreshnessPolicy(_Section):
    policy_id: str = Field(alias="policyId")
    missing_freshness_state: Literal["unknown", "current", "stale", "superseded"] = Field(
        alias="missingFreshnessState"
    )
    unknown_freshness_may_support_important_claim: bool = Field(
        alias="unknownFreshnessMaySupportImportantClaim"
    )
    stale_rows_enter_winner_set: bool = Field(alias="staleRowsEnterWinnerSet")
    freshness_is_tie_breaker_only: bool = Field(alias="freshnessIsTieBreakerOnly")


class PacketPolicy(_Section):
    max_excerpt_bytes_per_row: int = Field(default=2000, alias="maxExcerptBytesPerRow", ge=1)


class RetrievalSettings(_Section):
    collection: str = Field(min_length=1)


class Manifest(_Section):
    """A validated project retrieval manifest plus where it came from."""

    manifest_version: str = Field(alias="manifestVersion", pattern=r"^\d+\.\d+\.\d+$")
    manifest_id: str = Field(alias="manifestId", min_length=1)
    project_id: str = Field(alias="projectId", min_length=1)
    display_name: str = Field(default="", alias="displayName")
    project_root_setting: str = Field(default=".", alias="projectRoot")
    manifest_checksum: ManifestChecksum | None = Field(default=None, alias="manifestChecksum")
    scope: ScopePolicy
    source_refs: tuple[SourceRef, ...] = Field(alias="sourceRefs", min_length=1)
    security: SecurityPolicy
    retrieval: RetrievalSettings
    ranking_policy: RankingPolicy = Field(alias="rankingPolicy")
    fusion: FusionPolicy
    neighbor_expansion: NeighbourExpansion = Field(alias="neighborExpansion")
    verification_policy: VerificationPolicy = Field(alias="verificationPolicy")
    freshness_policy: FreshnessPolicy = Field(alias="freshnessPolicy")
    packet_policy: PacketPolicy = Field(default=PacketPolicy(), alias="packetPolicy")

    # Filled by load_manifest, not read from the file.
    path: Path | None = Field(default=None, exclude=True)
    sha256: str = Field(default="", exclude=True)
    project_root: Path = Field(default=Path("."), exclude=True)
    # The JSONL file each corpus root was ingested from, by root alias: recorded in the store at
    # ingest and attached by whoever opens both (``with_corpus_files``), never read from the file.
    corpus_files: tuple[tuple[str, Path], ...] = Field(default=(), exclude=True)

    @model_validator(mode="after")
    def _unique_ref_ids(self) -> Manifest:
        seen: set[str] = set()
        for ref in self.source_refs:
            if ref.source_id in seen:
                raise ValueError(f"duplicate sourceRefs sourceId {ref.source_id!r}")
            seen.add(ref.source_id)
        for ref in self.source_refs:
            if ref.classification in self.scope.denied_classifications:
                continue
            if ref.classification not in self.scope.allowed_classifications:
                raise ValueError(
                    f"sourceRefs {ref.source_id!r} classification {ref.classification!r} is neither allowed nor denied"
                )
        return self

    def with_corpus_files(self, files: Mapping[str, str | Path]) -> Manifest:
        """This manifest knowing where each ingested corpus root's file is, so its rows can be read."""
        pairs = tuple(sorted((alias, Path(path)) for alias, path in files.items()))
        return self.model_copy(update={"corpus_files": pairs})

    def corpus_file(self, root_alias: str) -> Path | None:
        """The file corpus root ``root_alias`` was ingested from, if the store recorded one."""
        return next((path for alias, path in self.corpus_files if alias == root_alias), None)

    def root_directory(self, ref: SourceRef) -> Path:
        """Absolute directory of a source ref's root."""
        return (self.project_root / ref.root_path).resolve()

    def classification_allowed(self, classification: str) -> bool:
        return (
            classification in self.scope.allowed_classifications
            and classification not in self.scope.denied_classifications
        )

    def denial_for_path(self, relative_path: str) -> DenialReason | None:
        """The security rule that forbids opening ``relative_path``, or None.

        Checks only the path string: absolute, parent-escaping, denied path token,
        denied basename token, denied extension (in that order).
        """
        if is_absolute_path(relative_path):
            return DenialReason.ABSOLUTE_PATH if self.security.deny_absolute_paths else None
        parts = PurePosixPath(relative_path.replace("\\", "/")).parts
        if ".." in parts and self.security.deny_escaping_paths:
            return DenialReason.ESCAPING_PATH
        lowered = "/" + "/".join(parts).lower()
        if any(token.lower() in lowered for token in self.security.deny_path_tokens):
            return DenialReason.DENIED_PATH_TOKEN
        basename = parts[-1].lower() if parts else ""
        if any(token.lower() in basename for token in self.security.deny_basename_tokens):
            return DenialReason.DENIED_BASENAME_TOKEN
        if PurePosixPath(basename).suffix in self.security.deny_extensions:
            return DenialReason.DENIED_EXTENSION
        return None

    def is_denied(self, relative_path: str) -> bool:
        return self.denial_for_path(relative_path) is not None

    def source_ref_for(self, root_alias: str, relative_path: str) -> SourceRef | None:
        """The first source ref on ``root_alias`` that includes ``relative_path``."""
        for ref in self.source_refs:
            if ref.root_alias == root_alias and ref.includes(relative_path):
                return ref
        return None

    def corpus_aliases(self) -> frozenset[str]:
        """Root aliases of JSONL corpora: source refs ``corpus:<alias>``, the ref every document of
        ``akm ingest --corpus`` is filed under. Only a corpus ingest fills them; a walk never does."""
        return frozenset(
            ref.root_alias for ref in self.source_refs if ref.source_id.startswith(CORPUS_SOURCE_PREFIX)
        )

    def file_root_aliases(self) -> dict[str, Path]:
        """Each root alias a walk reads files from (every root but the corpora), with its directory."""
        corpora = self.corpus_aliases()
        return {alias: path for alias, path in self.root_aliases().items() if alias not in corpora}

    def root_aliases(self) -> dict[str, Path]:
        """Each distinct root alias with its absolute directory."""
        roots: dict[str, Path] = {}
        for ref in self.source_refs:
            directory = self.root_directory(ref)
            if ref.root_alias in roots and roots[ref.root_alias] != directory:
                raise ManifestError(
                    "sourceRefs.rootPath", f"root alias {ref.root_alias!r} names two directories"
                )
            roots[ref.root_alias] = directory
        return roots


def is_absolute_path(path: str) -> bool:
    return path.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", path) is not None


@lru_cache(maxsize=512)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    out: list[str] = []
    index = 0
    while index < len(pattern):
        if pattern.startswith("**/", index):
            out.append("(?:[^/]+/)*")
            index += 3
        elif pattern.startswith("**", index):
            out.append(".*")
            index += 2
        elif pattern[index] == "*":
            out.append("[^/]*")
            index += 1
        elif pattern[index] == "?":
            out.append("[^/]")
            index += 1
        else:
            out.append(re.escape(pattern[index]))
            index += 1
    return re.compile("".join(out) + r"\Z")


def glob_matches(pattern: str, relative_path: str) -> bool:
    """Path glob: ``*`` and ``?`` stay within one segment, ``**/`` spans zero or more folders."""
    return _glob_regex(pattern).match(relative_path) is not None


def _field_of(error: Any) -> str:
    return ".".join(str(part) for part in error["loc"]) or "(root)"


def _check_json_schema(document: dict[str, Any], path: Path) -> None:
    import jsonschema

    schema = json.loads(MANIFEST_SCHEMA_RESOURCE.read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(document), key=lambda error: list(error.absolute_path))
    if errors:
        first = errors[0]
        field = ".".join(str(part) for part in first.absolute_path) or "(root)"
        raise ManifestError(field, first.message, path)


def manifest_folder(manifest_path: Path) -> Path:
    """The folder a manifest's ``projectRoot`` is relative to: the manifest's own folder, except
    for the default manifest shipped in the package, which belongs to no project and is read as
    if it were ``config/manifest.yaml`` of the working directory."""
    resolved = manifest_path.resolve()
    if resolved == DEFAULT_MANIFEST_FILE.resolve():
        return Path.cwd().resolve() / "config"
    return resolved.parent


def _project_root(manifest_path: Path, setting: str) -> Path:
    """The absolute project root ``setting`` names, or ManifestError.

    ``projectRoot`` is relative to the manifest's folder and may name that folder, its parent (a
    manifest kept in ``config/``) or a folder under either; it may not be absolute or climb
    further (``/``, ``../../..``), even through a symbolic link, and it must be an existing
    folder, so a mistyped root is an error rather than an ingest of nothing.
    """
    folder = manifest_folder(manifest_path)
    if is_absolute_path(setting):
        raise ManifestError(
            "projectRoot", f"must be relative to the manifest's folder, got {setting!r}", manifest_path
        )
    normalised = PurePosixPath(os.path.normpath(setting.replace("\\", "/")))
    if normalised.parts.count("..") > 1:
        raise ManifestError(
            "projectRoot",
            f"{setting!r} climbs above the parent of the manifest's folder; name the project's folder instead",
            manifest_path,
        )
    root = (folder / setting).resolve()
    if not root.is_relative_to(folder.parent):
        raise ManifestError(
            "projectRoot", f"{setting!r} resolves outside the manifest's parent folder", manifest_path
        )
    if not root.is_dir():
        raise ManifestError("projectRoot", f"folder {root} does not exist", manifest_path)
    return root


def load_manifest(path: Path | str, *, check_schema: bool = True) -> Manifest:
    """Read, validate and fingerprint a manifest file.

    Raises ManifestError (naming the field and the reason) for anything unusable.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise ManifestError("(file)", f"cannot read manifest: {error.strerror}", path) from error
    try:
        document = yaml.safe_load(raw)
    except yaml.YAMLError as error:
        raise ManifestError("(file)", f"not valid YAML: {error}", path) from error
    if not isinstance(document, dict):
        raise ManifestError("(root)", "must be a mapping", path)
    if check_schema:
        _check_json_schema(document, path)
    try:
        manifest = Manifest.model_validate(document)
    except ValidationError as error:
        first = error.errors()[0]
        raise ManifestError(_field_of(first), first["msg"], path) from error
    project_root = _project_root(path, manifest.project_root_setting)
    return manifest.model_copy(
        update={
            "path": path.resolve(),
            "sha256": hashlib.sha256(raw).hexdigest(),
            "project_root": project_root,
        }
    )
