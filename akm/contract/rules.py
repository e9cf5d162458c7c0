"""Contract rules that JSON Schema cannot express: cross-field, cross-row and packet-level checks.

The checker reads plain JSON (``dict``) documents and never raises on malformed input: a
field that is missing or of the wrong type is the schema's finding, and a rule that needs
it is simply not evaluated. Every finding is a :class:`Violation` with a stable rule ID.

Row rules (applied to a stand-alone row and to every row of a packet):

======================  ==================================================================
Rule ID                 A row violates it when ...
======================  ==================================================================
E3                      it is ``direct-read``/``claim-supported``, its source has a checksum
                        (``checksumAlgorithm`` not ``none``) and ``directRead.observedChecksum``
                        is absent: the read recorded no observed checksum although one exists.
E3-checksum-mismatch    it is ``direct-read``/``claim-supported`` but ``directRead.checksumMatch``
                        is false: the read saw other content than was retrieved, so it is stale.
E3-checksum-match       ``checksumMatch`` is true but ``observedChecksum`` differs from
                        ``source.version.checksum`` (both hex digests).
E4                      it is ``claim-supported`` and its history has no ``direct-read`` event:
                        a claim was promoted without a recorded direct read. In a packet, also
                        a ``supported`` claim citing a non-candidate row that is not
                        ``claim-supported`` for that claimId (important claims: S5.4).
history-consistent      its history is present but does not start with ``candidate`` or its
                        last event's state differs from ``verification.state``.
history-transition      two consecutive history events form an edge outside §3.1's graph.
history-order           an event's ``at`` is earlier than the previous event's.
evidence-id-stable      an evidenceId in digest form (``ev:sha256:`` and 64 hex digits) differs from
                        ``evidence_id(schemaVersion, sourceId, revision, checksum, locator.value)``.
                        Any other ID is left alone: upstream §8 only recommends the recipe.
excerpt-checksum        ``excerptChecksum`` is a digest that is not the SHA-256 of ``excerpt``.
locator-line-range      ``locator.endLine`` is smaller than ``locator.startLine``.
S9-classification       it is ``in-scope``/``explicit-expansion`` but its source is ``private``,
                        ``restricted`` or ``unknown`` (§9: such sources are excluded).
S9-absolute-path        ``canonicalUri`` (``file:``) or ``directRead.locatorRead`` is a
                        machine-absolute or parent-escaping path (§9, E11).
E11-secret-value        an excerpt, neighbour block, note or metadata value contains a
                        credential in a recognisable format (private key block, cloud or
                        forge access token); secrets are never stored (E11).
======================  ==================================================================

Packet rules:

=========================  ===============================================================
Rule ID                    A packet violates it when ...
=========================  ===============================================================
id-unique                  two rows share an evidenceId, or two claims a claimId, or two
                           conflicts a conflictId, or two queue items a queueId.
E2                         a claim with status ``supported`` lists a ``candidate`` row as support.
S5.4-important-supported   an ``important`` claim is ``supported`` but one of its support rows
                           is missing, not ``claim-supported``, or lacks that claimId.
claim-ref-exists           a row, conflict, missing-evidence record or queue item names a
                           claimId that is not in ``claims``.
row-ref-exists             a claim's supportRowIds, or a queue item's rowId/completionRowId,
                           names a row that is not in ``evidenceRows``.
S5.6-completion-read       a ``completed`` queue item's completion row has no performed direct read.
conflict-agreement         a ``conflicted`` row names a conflictId absent from ``conflicts``; a
                           conflict names a row absent from ``evidenceRows``; or a row in an
                           ``open`` conflict is not ``conflicted`` with that conflictId.
project-consistent         a row's projectId/manifestId/manifestVersion differ from ``project``.
fusion-winner-row          a winner (``fusion.contributions``) is not in ``evidenceRows``.
E7-lane-ranks              a winner's ``laneRanks`` is empty or names a lane not recorded as
                           ``completed`` in ``lanesRun``.
excluded-not-winner        an evidenceId appears in both ``excludedRows`` and ``contributions``.
E8-cap                     more winners share one sourceId than ``fusion.perSourceCap``.
fusion-max-rows            there are more winners than ``fusion.maxRows``.
S4.3-scope-winner          a winner's ``scopeDecision`` is ``out-of-scope`` or ``denied``.
S9-denied-leak             a row with ``scopeDecision: denied`` is in ``evidenceRows`` at all.
E9-expansion-winner        a row that is not a winner carries ``content.contextExpansion``.
S3.2-pass                  the verdict is PASS/PASS_WITH_NOTE and an important claim is
                           ``unsupported``, ``candidate-only``, ``direct-read-pending`` or
                           ``conflicted``; or a blocking conflict is open (one that names an
                           important claim or a row supporting one); or required missing
                           evidence is open.
S3.2-pass-caveat           the verdict is PASS but a caveat remains (an open conflict or open
                           missing evidence of any kind): it is at most PASS_WITH_NOTE.
S5.6-required-skipped      the verdict is PASS/PASS_WITH_NOTE and a required queue item is
                           ``skipped``.
S5.6-required-open         the verdict is PASS/PASS_WITH_NOTE and a required queue item is
                           ``pending`` or ``failed``.
metrics-derivable          a non-null metric that the packet determines has another value
                           (definitions: ``akm.contract.builders.derivable_metrics``).
metrics-inconsistent       non-null metrics contradict each other (a part exceeds its whole).
metrics-unmeasured-zero    a metric the packet cannot derive is 0 although the packet shows
                           it was not measured or is non-zero (§5.7: unmeasured is null).
=========================  ===============================================================
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, TypeGuard

from pydantic import ValidationError

from akm.contract.builders import derivable_metrics
from akm.contract.ids import EVIDENCE_ID_PREFIX, evidence_id, parse_timestamp, sha256_text
from akm.contract.models import EvidencePacket
from akm.contract.states import is_allowed
from akm.contract.violations import Violation, json_pointer

_READ_STATES = ("direct-read", "claim-supported")
_NOT_PASSING_IMPORTANT = ("unsupported", "candidate-only", "direct-read-pending", "conflicted")
_PASSING_VERDICTS = ("PASS", "PASS_WITH_NOTE")
_EXCLUDED_CLASSIFICATIONS = ("private", "restricted", "unknown")
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
# Only formats that are unambiguous: prose *about* passwords must not trip the rule.
_SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("private key block", re.compile(r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----")),
    ("AWS access key ID", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("GitHub token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b")),
    ("GitHub fine-grained token", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{40,}\b")),
    ("Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("OpenAI-style API key", re.compile(r"\bsk-[A-Za-z0-9_-]{32,}")),
    ("JSON Web Token", re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}")),
)
_ABSOLUTE_PATH = re.compile(r"^(?:/|[A-Za-z]:[\\/]|\\\\)")


def _obj(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _strs(value: object) -> list[str]:
    return [item for item in _list(value) if isinstance(item, str)]


def _is_digest(value: object) -> bool:
    return isinstance(value, str) and len(value) == 64 and set(value) <= _HEX_DIGITS


def _at(path: str, *parts: str | int) -> str:
    return path + json_pointer(*parts)


def check_row(row: object, pointer: str = "") -> list[Violation]:
    """Rule violations of one EvidenceRow JSON object (see the module table)."""
    document = _obj(row)
    if not document:
        return []
    violations: list[Violation] = []
    violations.extend(_direct_read_rules(document, pointer))
    violations.extend(_history_rules(document, pointer))
    violations.extend(_identity_rules(document, pointer))
    scope = _obj(document.get("scope"))
    locator = _obj(scope.get("locator"))
    start, end = locator.get("startLine"), locator.get("endLine")
    if isinstance(start, int) and isinstance(end, int) and end < start:
        violations.append(
            Violation(
                "locator-line-range",
                _at(pointer, "scope", "locator", "endLine"),
                f"endLine {end} is before startLine {start}",
            )
        )
    violations.extend(_security_rules(document, pointer))
    classification = _obj(document.get("source")).get("classification")
    if scope.get("scopeDecision") in ("in-scope", "explicit-expansion") and classification in (
        _EXCLUDED_CLASSIFICATIONS
    ):
        violations.append(
            Violation(
                "S9-classification",
                _at(pointer, "scope", "scopeDecision"),
                f"a {classification} source cannot be {scope.get('scopeDecision')}; §9 excludes it",
            )
        )
    return violations


def _escapes(path: str) -> bool:
    return bool(_ABSOLUTE_PATH.match(path)) or ".." in re.split(r"[\\/]", path)


def _security_rules(document: dict[str, Any], pointer: str) -> list[Violation]:
    violations: list[Violation] = []
    source = _obj(document.get("source"))
    uri = source.get("canonicalUri")
    if isinstance(uri, str) and uri.startswith("file:") and _escapes(uri.removeprefix("file:")):
        violations.append(
            Violation(
                "S9-absolute-path",
                _at(pointer, "source", "canonicalUri"),
                "a file: URI must be project-relative, not machine-absolute or escaping",
            )
        )
    locator_read = _obj(_obj(document.get("verification")).get("directRead")).get("locatorRead")
    if isinstance(locator_read, str) and _escapes(locator_read):
        violations.append(
            Violation(
                "S9-absolute-path",
                _at(pointer, "verification", "directRead", "locatorRead"),
                "locatorRead must be project-relative, not machine-absolute or escaping",
            )
        )
    content = _obj(document.get("content"))
    texts: list[tuple[str, tuple[str | int, ...]]] = [
        (content[key], ("content", key))
        for key in ("excerpt", "before", "after")
        if isinstance(content.get(key), str)
    ]
    notes = _obj(document.get("verification")).get("notes")
    if isinstance(notes, str):
        texts.append((notes, ("verification", "notes")))
    for key, value in _obj(source.get("sourceMetadata")).items():
        if isinstance(value, str):
            texts.append((value, ("source", "sourceMetadata", key)))
    for text, parts in texts:
        for name, pattern in _SECRET_PATTERNS:
            if pattern.search(text):
                violations.append(
                    Violation(
                        "E11-secret-value",
                        _at(pointer, *parts),
                        f"contains what looks like a {name}; secret values are never stored",
                    )
                )
                break
    return violations


def _direct_read_rules(document: dict[str, Any], pointer: str) -> list[Violation]:
    verification = _obj(document.get("verification"))
    state = verification.get("state")
    if state not in _READ_STATES:
        return []
    violations: list[Violation] = []
    version = _obj(_obj(document.get("source")).get("version"))
    direct_read = _obj(verification.get("directRead"))
    algorithm = version.get("checksumAlgorithm")
    if algorithm in ("sha256", "source-native") and "observedChecksum" not in direct_read:
        violations.append(
            Violation(
                "E3",
                _at(pointer, "verification", "directRead"),
                f"a {state} row of a source with checksumAlgorithm {algorithm} must record observedChecksum",
            )
        )
    match = direct_read.get("checksumMatch")
    if match is False:
        violations.append(
            Violation(
                "E3-checksum-mismatch",
                _at(pointer, "verification", "directRead", "checksumMatch"),
                f"a {state} row whose read saw a different checksum must be stale instead",
            )
        )
    observed, recorded = direct_read.get("observedChecksum"), version.get("checksum")
    if (
        match is True
        and _is_digest(observed)
        and _is_digest(recorded)
        and str(observed).lower() != str(recorded).lower()
    ):
        violations.append(
            Violation(
                "E3-checksum-match",
                _at(pointer, "verification", "directRead", "checksumMatch"),
                "checksumMatch is true but observedChecksum differs from source.version.checksum",
            )
        )
    return violations


def _history_rules(document: dict[str, Any], pointer: str) -> list[Violation]:
    verification = _obj(document.get("verification"))
    state = verification.get("state")
    events = [_obj(event) for event in _list(verification.get("history"))]
    violations: list[Violation] = []
    states = [event.get("state") for event in events]
    if state == "claim-supported" and "history" in verification and "direct-read" not in states:
        violations.append(
            Violation(
                "E4",
                _at(pointer, "verification", "history"),
                "a claim-supported row needs a direct-read event before its claim support",
            )
        )
    if not events:
        return violations
    if states[0] != "candidate":
        violations.append(
            Violation(
                "history-consistent",
                _at(pointer, "verification", "history", 0, "state"),
                f"history must start with a candidate event, not {states[0]!r}",
            )
        )
    if states[-1] != state:
        violations.append(
            Violation(
                "history-consistent",
                _at(pointer, "verification", "history", len(events) - 1, "state"),
                f"last history event is {states[-1]!r} but verification.state is {state!r}",
            )
        )
    previous_time: datetime | None = None
    for index, (before, after) in enumerate(itertools.pairwise(states), start=1):
        if isinstance(before, str) and isinstance(after, str) and not is_allowed(before, after):
            violations.append(
                Violation(
                    "history-transition",
                    _at(pointer, "verification", "history", index, "state"),
                    f"history moves {before} -> {after}, which §3.1 does not allow",
                )
            )
    for index, event in enumerate(events):
        moment = _timestamp(event.get("at"))
        if moment is None:
            continue
        if previous_time is not None and moment < previous_time:
            violations.append(
                Violation(
                    "history-order",
                    _at(pointer, "verification", "history", index, "at"),
                    "event is earlier than the event before it",
                )
            )
        previous_time = moment
    return violations


def _timestamp(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return parse_timestamp(value)
    except ValueError:
        return None


def _identity_rules(document: dict[str, Any], pointer: str) -> list[Violation]:
    violations: list[Violation] = []
    row_id = document.get("evidenceId")
    source = _obj(document.get("source"))
    version = _obj(source.get("version"))
    locator = _obj(_obj(document.get("scope")).get("locator"))
    inputs = (
        document.get("schemaVersion"),
        source.get("sourceId"),
        version.get("revision"),
        locator.get("value"),
    )
    if (
        isinstance(row_id, str)
        and row_id.startswith(EVIDENCE_ID_PREFIX)
        and _is_digest(row_id.removeprefix(EVIDENCE_ID_PREFIX))
        and all(isinstance(x, str) for x in inputs)
    ):
        checksum = version.get("checksum")
        expected = evidence_id(
            str(inputs[0]),
            str(inputs[1]),
            str(inputs[2]),
            checksum if isinstance(checksum, str) else None,
            str(inputs[3]),
        )
        if row_id != expected:
            violations.append(
                Violation(
                    "evidence-id-stable",
                    _at(pointer, "evidenceId"),
                    f"evidenceId is not reproducible from schemaVersion, sourceId, revision, checksum and "
                    f"locator; expected {expected}",
                )
            )
    content = _obj(document.get("content"))
    excerpt, recorded = content.get("excerpt"), content.get("excerptChecksum")
    if isinstance(excerpt, str) and _is_digest(recorded) and str(recorded).lower() != sha256_text(excerpt):
        violations.append(
            Violation(
                "excerpt-checksum",
                _at(pointer, "content", "excerptChecksum"),
                "excerptChecksum is not the SHA-256 of the excerpt",
            )
        )
    return violations


def check_packet(packet: object, pointer: str = "") -> list[Violation]:
    """Rule violations of one EvidencePacket JSON object, including those of each of its rows."""
    document = _obj(packet)
    if not document:
        return []
    rows = [_obj(row) for row in _list(document.get("evidenceRows"))]
    violations: list[Violation] = []
    for index, row in enumerate(rows):
        violations.extend(check_row(row, _at(pointer, "evidenceRows", index)))
    context = _PacketContext(document, rows, pointer)
    violations.extend(context.uniqueness())
    violations.extend(context.claim_support())
    violations.extend(context.references())
    violations.extend(context.conflicts())
    violations.extend(context.fusion())
    violations.extend(context.verdict())
    violations.extend(context.metrics())
    return violations


class _PacketContext:
    """Indexes of one packet shared by the packet rules."""

    def __init__(self, document: dict[str, Any], rows: list[dict[str, Any]], pointer: str) -> None:
        self.document = document
        self.rows = rows
        self.pointer = pointer
        self.row_by_id: dict[str, dict[str, Any]] = {}
        for row in rows:
            if isinstance(row.get("evidenceId"), str):
                self.row_by_id.setdefault(row["evidenceId"], row)
        self.claims = [_obj(claim) for claim in _list(document.get("claims"))]
        self.claim_ids = {
            claim.get("claimId") for claim in self.claims if isinstance(claim.get("claimId"), str)
        }
        self.important = {
            claim["claimId"]
            for claim in self.claims
            if claim.get("importance") == "important" and isinstance(claim.get("claimId"), str)
        }
        self.conflict_list = [_obj(conflict) for conflict in _list(document.get("conflicts"))]
        self.queue = [_obj(item) for item in _list(document.get("directReadQueue"))]
        self.missing = [_obj(item) for item in _list(document.get("missingEvidence"))]
        self.fusion_record = _obj(document.get("fusion"))
        self.contributions = [_obj(item) for item in _list(self.fusion_record.get("contributions"))]
        self.winners: list[str] = []
        for contribution in self.contributions:
            winner = contribution.get("evidenceId")
            if isinstance(winner, str) and winner not in self.winners:
                self.winners.append(winner)
        self.verdict_value = _obj(document.get("verification")).get("verdict")

    def at(self, *parts: str | int) -> str:
        return _at(self.pointer, *parts)

    @staticmethod
    def state_of(row: Mapping[str, Any]) -> object:
        return _obj(row.get("verification")).get("state")

    def uniqueness(self) -> Iterable[Violation]:
        for collection, key, items in (
            ("evidenceRows", "evidenceId", self.rows),
            ("claims", "claimId", self.claims),
            ("conflicts", "conflictId", self.conflict_list),
            ("directReadQueue", "queueId", self.queue),
        ):
            seen: set[str] = set()
            for index, item in enumerate(items):
                value = item.get(key)
                if isinstance(value, str):
                    if value in seen:
                        yield Violation(
                            "id-unique", self.at(collection, index, key), f"duplicate {key} {value!r}"
                        )
                    seen.add(value)

    def claim_support(self) -> Iterable[Violation]:
        for index, claim in enumerate(self.claims):
            if claim.get("status") != "supported":
                continue
            claim_id = claim.get("claimId")
            for position, row_id in enumerate(_strs(claim.get("supportRowIds"))):
                where = self.at("claims", index, "supportRowIds", position)
                row = self.row_by_id.get(row_id)
                if row is not None and self.state_of(row) == "candidate":
                    yield Violation("E2", where, f"supported claim {claim_id!r} cites candidate row {row_id}")
                if claim.get("importance") != "important":
                    if row is not None and self.state_of(row) != "candidate" and not _supports(row, claim_id):
                        yield Violation(
                            "E4",
                            where,
                            f"supported claim {claim_id!r} cites row {row_id}, which is not claim-supported for it "
                            f"(row is {self.state_of(row)})",
                        )
                    continue
                if row is None:
                    yield Violation(
                        "S5.4-important-supported", where, f"support row {row_id} is not in evidenceRows"
                    )
                elif not _supports(row, claim_id):
                    yield Violation(
                        "S5.4-important-supported",
                        where,
                        f"important claim {claim_id!r} is supported only if row {row_id} is claim-supported "
                        f"for it (row is {self.state_of(row)})",
                    )

    def references(self) -> Iterable[Violation]:
        for index, row in enumerate(self.rows):
            for position, claim_id in enumerate(_strs(_obj(row.get("verification")).get("claimIds"))):
                if claim_id not in self.claim_ids:
                    yield Violation(
                        "claim-ref-exists",
                        self.at("evidenceRows", index, "verification", "claimIds", position),
                        f"claim {claim_id!r} is not in claims",
                    )
        for collection, items in (
            ("conflicts", self.conflict_list),
            ("missingEvidence", self.missing),
            ("directReadQueue", self.queue),
        ):
            for index, item in enumerate(items):
                for position, claim_id in enumerate(_strs(item.get("claimIds"))):
                    if claim_id not in self.claim_ids:
                        yield Violation(
                            "claim-ref-exists",
                            self.at(collection, index, "claimIds", position),
                            f"claim {claim_id!r} is not in claims",
                        )
        for index, claim in enumerate(self.claims):
            for position, row_id in enumerate(_strs(claim.get("supportRowIds"))):
                if row_id not in self.row_by_id:
                    yield Violation(
                        "row-ref-exists",
                        self.at("claims", index, "supportRowIds", position),
                        f"row {row_id} is not in evidenceRows",
                    )
        for index, item in enumerate(self.queue):
            for key in ("rowId", "completionRowId"):
                referenced = item.get(key)
                if isinstance(referenced, str) and referenced not in self.row_by_id:
                    yield Violation(
                        "row-ref-exists",
                        self.at("directReadQueue", index, key),
                        f"row {referenced} is not in evidenceRows",
                    )
            completion = self.row_by_id.get(str(item.get("completionRowId")))
            if item.get("status") == "completed" and completion is not None:
                direct_read = _obj(_obj(completion.get("verification")).get("directRead"))
                if direct_read.get("performed") is not True:
                    yield Violation(
                        "S5.6-completion-read",
                        self.at("directReadQueue", index, "completionRowId"),
                        "a completed direct read must point at a row whose directRead.performed is true",
                    )
        project = _obj(self.document.get("project"))
        for index, row in enumerate(self.rows):
            scope = _obj(row.get("scope"))
            for key in ("projectId", "manifestId", "manifestVersion"):
                if key in project and key in scope and scope[key] != project[key]:
                    yield Violation(
                        "project-consistent",
                        self.at("evidenceRows", index, "scope", key),
                        f"row {key} {scope[key]!r} differs from the packet's {project[key]!r}",
                    )

    def conflicts(self) -> Iterable[Violation]:
        conflict_by_id = {
            conflict["conflictId"]: conflict
            for conflict in self.conflict_list
            if isinstance(conflict.get("conflictId"), str)
        }
        for index, row in enumerate(self.rows):
            verification = _obj(row.get("verification"))
            if verification.get("state") != "conflicted":
                continue
            for position, conflict_id in enumerate(_strs(verification.get("conflictIds"))):
                if conflict_id not in conflict_by_id:
                    yield Violation(
                        "conflict-agreement",
                        self.at("evidenceRows", index, "verification", "conflictIds", position),
                        f"conflict {conflict_id!r} is not in conflicts",
                    )
        for index, conflict in enumerate(self.conflict_list):
            named = conflict.get("conflictId")
            for position, row_id in enumerate(_strs(conflict.get("rowIds"))):
                where = self.at("conflicts", index, "rowIds", position)
                member = self.row_by_id.get(row_id)
                if member is None:
                    yield Violation("conflict-agreement", where, f"row {row_id} is not in evidenceRows")
                elif conflict.get("status") == "open":
                    verification = _obj(member.get("verification"))
                    if verification.get("state") != "conflicted" or named not in _strs(
                        verification.get("conflictIds")
                    ):
                        yield Violation(
                            "conflict-agreement",
                            where,
                            f"row {row_id} is in open conflict {named!r} but is not conflicted with it",
                        )

    def fusion(self) -> Iterable[Violation]:
        completed_lanes = {
            run.get("lane")
            for run in map(_obj, _list(self.document.get("lanesRun")))
            if run.get("status") == "completed"
        }
        excluded = {
            item.get("evidenceId"): index
            for index, item in enumerate(map(_obj, _list(self.fusion_record.get("excludedRows"))))
        }
        for index, contribution in enumerate(self.contributions):
            winner = contribution.get("evidenceId")
            where = self.at("fusion", "contributions", index)
            if isinstance(winner, str) and winner not in self.row_by_id:
                yield Violation(
                    "fusion-winner-row", where + "/evidenceId", f"winner {winner} is not in evidenceRows"
                )
            lane_ranks = _obj(contribution.get("laneRanks"))
            unknown = sorted(lane for lane in lane_ranks if lane not in completed_lanes)
            if not lane_ranks or unknown:
                detail = (
                    f"names lanes not completed in lanesRun: {', '.join(unknown)}" if unknown else "is empty"
                )
                yield Violation("E7-lane-ranks", where + "/laneRanks", f"laneRanks {detail}")
            if winner in excluded:
                yield Violation(
                    "excluded-not-winner",
                    where + "/evidenceId",
                    f"row {winner} is both a winner and excludedRows[{excluded[winner]}]",
                )
        winner_rows = [
            (winner, self.row_by_id[winner]) for winner in self.winners if winner in self.row_by_id
        ]
        cap = self.fusion_record.get("perSourceCap")
        per_source = Counter(_obj(row.get("source")).get("sourceId") for _, row in winner_rows)
        if isinstance(cap, int):
            for source_id, count in sorted(per_source.items(), key=lambda item: str(item[0])):
                if count > cap:
                    yield Violation(
                        "E8-cap",
                        self.at("fusion", "perSourceCap"),
                        f"{count} winners come from source {source_id!r}; perSourceCap is {cap}",
                    )
        max_rows = self.fusion_record.get("maxRows")
        if isinstance(max_rows, int) and len(self.winners) > max_rows:
            yield Violation(
                "fusion-max-rows",
                self.at("fusion", "maxRows"),
                f"{len(self.winners)} winners exceed maxRows {max_rows}",
            )
        winner_set = set(self.winners)
        for index, row in enumerate(self.rows):
            decision = _obj(row.get("scope")).get("scopeDecision")
            row_id = row.get("evidenceId")
            if row_id in winner_set and decision in ("out-of-scope", "denied"):
                yield Violation(
                    "S4.3-scope-winner",
                    self.at("evidenceRows", index, "scope", "scopeDecision"),
                    f"an {decision} row cannot be a fusion winner",
                )
            if decision == "denied":
                yield Violation(
                    "S9-denied-leak",
                    self.at("evidenceRows", index),
                    "a denied source must not appear in a packet (count-only reporting)",
                )
            if row_id not in winner_set and "contextExpansion" in _obj(row.get("content")):
                yield Violation(
                    "E9-expansion-winner",
                    self.at("evidenceRows", index, "content", "contextExpansion"),
                    "neighbour context is expanded only for fusion winners",
                )

    def _supports_important(self, row_id: str) -> bool:
        return any(
            claim.get("claimId") in self.important and row_id in _strs(claim.get("supportRowIds"))
            for claim in self.claims
        )

    def verdict(self) -> Iterable[Violation]:
        if self.verdict_value not in _PASSING_VERDICTS:
            return
        verdict = self.verdict_value
        for index, claim in enumerate(self.claims):
            if claim.get("importance") == "important" and claim.get("status") in _NOT_PASSING_IMPORTANT:
                yield Violation(
                    "S3.2-pass",
                    self.at("claims", index, "status"),
                    f"{verdict} with important claim {claim.get('claimId')!r} {claim.get('status')}",
                )
        for index, conflict in enumerate(self.conflict_list):
            if conflict.get("status") != "open":
                continue
            blocking = bool(set(_strs(conflict.get("claimIds"))) & self.important) or any(
                self._supports_important(row_id) for row_id in _strs(conflict.get("rowIds"))
            )
            if blocking:
                yield Violation(
                    "S3.2-pass",
                    self.at("conflicts", index, "status"),
                    f"{verdict} with open conflict {conflict.get('conflictId')!r} affecting an important claim",
                )
            elif verdict == "PASS":
                yield Violation(
                    "S3.2-pass-caveat",
                    self.at("conflicts", index, "status"),
                    "PASS with an open conflict; a non-blocking caveat makes it at most PASS_WITH_NOTE",
                )
        for index, item in enumerate(self.missing):
            if item.get("status") != "open":
                continue
            if item.get("required") is True:
                yield Violation(
                    "S3.2-pass",
                    self.at("missingEvidence", index, "status"),
                    f"{verdict} while required evidence {item.get('missingId')!r} is missing",
                )
            elif verdict == "PASS":
                yield Violation(
                    "S3.2-pass-caveat",
                    self.at("missingEvidence", index, "status"),
                    "PASS with an open optional evidence gap; it is at most PASS_WITH_NOTE",
                )
        for index, item in enumerate(self.queue):
            if item.get("required") is not True:
                continue
            status = item.get("status")
            if status == "skipped":
                yield Violation(
                    "S5.6-required-skipped",
                    self.at("directReadQueue", index, "status"),
                    f"required direct read {item.get('queueId')!r} was skipped in a {verdict} packet",
                )
            elif status in ("pending", "failed"):
                yield Violation(
                    "S5.6-required-open",
                    self.at("directReadQueue", index, "status"),
                    f"required direct read {item.get('queueId')!r} is {status} in a {verdict} packet",
                )

    def metrics(self) -> Iterable[Violation]:
        metrics = _obj(self.document.get("metrics"))
        if not metrics:
            return
        yield from self._derivable_metrics(metrics)
        yield from self._metric_order(metrics)
        yield from self._unmeasured_zeroes(metrics)

    def _derivable_metrics(self, metrics: dict[str, Any]) -> Iterable[Violation]:
        try:
            packet = EvidencePacket.from_json(self.document)
        except ValidationError:
            # The schema findings already say why; derived counts need a well-formed packet.
            return
        derived = derivable_metrics(
            rows=packet.evidence_rows,
            fusion=packet.fusion,
            claims=packet.claims,
            direct_read_queue=packet.direct_read_queue,
        )
        for name, value in derived.items():
            alias = _camel(name)
            recorded = metrics.get(alias)
            if value is not None and recorded is not None and recorded != value:
                yield Violation(
                    "metrics-derivable",
                    self.at("metrics", alias),
                    f"{alias} is {recorded} but the packet gives {value}",
                )

    def _metric_order(self, metrics: dict[str, Any]) -> Iterable[Violation]:
        for part, whole in (
            ("importantClaimSupportedCount", "importantClaimCount"),
            ("directReadCompletedCount", "directReadRequiredCount"),
            ("finalRowCount", "eligibleCount"),
            ("eligibleCount", "inputCandidateCount"),
            ("deduplicatedSourceCount", "inputCandidateCount"),
            ("uniqueSourceCount", "finalRowCount"),
            ("uniqueSourceTypeCount", "uniqueSourceCount"),
            ("capExcludedCount", "inputCandidateCount"),
        ):
            low, high = metrics.get(part), metrics.get(whole)
            if _is_number(low) and _is_number(high) and low > high:
                yield Violation(
                    "metrics-inconsistent",
                    self.at("metrics", part),
                    f"{part} {low} exceeds {whole} {high}",
                )

    def _unmeasured_zeroes(self, metrics: dict[str, Any]) -> Iterable[Violation]:
        lanes = [_obj(run) for run in _list(self.document.get("lanesRun"))]
        results = sum(run.get("resultCount", 0) for run in lanes if isinstance(run.get("resultCount"), int))
        has_excerpts = any(_obj(row.get("content")).get("excerpt") for row in self.rows)
        lane_latencies = [run["latencyMs"] for run in lanes if _is_number(run.get("latencyMs"))]
        cited = any(_strs(claim.get("supportRowIds")) for claim in self.claims)
        contradictions = {
            "inputCandidateCount": (results > 0 or bool(self.rows), "lanes returned results"),
            "eligibleCount": (bool(self.winners), "the packet has fusion winners"),
            "deduplicatedSourceCount": (bool(self.winners), "the packet has fusion winners"),
            "inputBytes": (has_excerpts, "the packet's rows carry excerpts"),
            "estimatedContextTokens": (has_excerpts, "the packet's rows carry excerpts"),
            "citationCoverage": (cited, "claims cite support rows"),
            "totalLatencyMs": (
                not lane_latencies or any(value > 0 for value in lane_latencies),
                "no lane latency was measured" if not lane_latencies else "lanes recorded non-zero latency",
            ),
        }
        for name, (contradicted, why) in contradictions.items():
            if metrics.get(name) == 0 and contradicted:
                yield Violation(
                    "metrics-unmeasured-zero",
                    self.at("metrics", name),
                    f"{name} is 0 but {why}; an unmeasured metric must be null",
                )


def _supports(row: Mapping[str, Any], claim_id: object) -> bool:
    """Whether ``row`` is claim-supported for exactly ``claim_id`` (E4, §5.4)."""
    verification = _obj(row.get("verification"))
    return verification.get("state") == "claim-supported" and claim_id in _strs(verification.get("claimIds"))


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


RULE_IDS: tuple[str, ...] = (
    "E2",
    "E3",
    "E3-checksum-match",
    "E3-checksum-mismatch",
    "E4",
    "E7-lane-ranks",
    "E8-cap",
    "E9-expansion-winner",
    "E11-secret-value",
    "S3.2-pass",
    "S3.2-pass-caveat",
    "S4.3-scope-winner",
    "S5.4-important-supported",
    "S5.6-completion-read",
    "S5.6-required-open",
    "S5.6-required-skipped",
    "S9-absolute-path",
    "S9-classification",
    "S9-denied-leak",
    "claim-ref-exists",
    "conflict-agreement",
    "evidence-id-stable",
    "excerpt-checksum",
    "excluded-not-winner",
    "fusion-max-rows",
    "fusion-winner-row",
    "history-consistent",
    "history-order",
    "history-transition",
    "id-unique",
    "locator-line-range",
    "metrics-derivable",
    "metrics-inconsistent",
    "metrics-unmeasured-zero",
    "project-consistent",
    "row-ref-exists",
)

__all__ = ["RULE_IDS", "Violation", "check_packet", "check_row"]
