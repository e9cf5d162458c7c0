"""The audit viewer: server-rendered HTML pages under ``/ui/`` over the same audit service.

* ``/ui/`` asks a question; the page's script streams ``POST /v1/answers`` (``stream: true``)
  and shows the unverified draft, then the verified claims, then the verdict and a link to
  the packet page.
* ``/ui/packets/{id}``: each claim with its status and support score, and for each cited row
  the lines its locator names (highlighted, with the stored context around them), the
  source's revision and checksum, and the direct read that confirmed them.
* ``/ui/rejections``: the rejected-candidates log with the filters of
  ``GET /v1/audit/rejections`` (and the packet filter of ``akm audit rejections``).
* ``/ui/sources`` and ``/ui/sources/{id}``: the sources in scope, and what relied on each
  revision of one (the dependents query of ``GET /v1/audit/sources/{id}/dependents``).

Every page reads through :class:`akm.service.audit.AuditService`, so it sees exactly what the
API sees: a packet or source outside the manifest's scope is a 404 page, like an unknown one.
Templates are autoescaped (Jinja2), the script writes text with ``textContent`` only, and the
Content-Security-Policy allows scripts, styles and connections from this origin only. The
routes are left out of the OpenAPI document.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from typing import Any
from urllib.parse import quote, urlencode

import jinja2
from fastapi import APIRouter, Depends
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from akm import __version__
from akm.api.auth import require_scope
from akm.api.deps import AuditDep, LimitsDep
from akm.service.audit import RejectionFilters
from akm.service.errors import NotFoundError

UI_PACKAGE = "akm.api.ui"

# When API keys are on, every viewer page (and its static files) needs the ``audit`` scope; the
# ask page also needs ``ask``, which its script's POST /v1/answers needs too (akm.api.auth).
router = APIRouter(prefix="/ui", include_in_schema=False, dependencies=[Depends(require_scope("audit"))])

# Pages are built from this origin's files only; nothing inline runs, nothing is framed.
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}

_STATIC_TYPES = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8"}
_STATIC_NAME = re.compile(r"^[a-z][a-z0-9-]*\.(?:css|js)$")
# The score the verifier wrote into its judgement note, e.g. "... agree (support score 1.00)".
_NOTE_SCORE = re.compile(r"\bsupport score (\d+(?:\.\d+)?)\b")
# Characters kept as they are when an ID goes into a path or query of a viewer link.
_ID_SAFE = ":/@"
FILTER_MAX_CHARS = 512


# ---- templates and static files ---------------------------------------------------------------


@cache
def _static_files() -> dict[str, bytes]:
    folder = resources.files(UI_PACKAGE).joinpath("static")
    return {
        entry.name: entry.read_bytes()
        for entry in folder.iterdir()
        if entry.is_file() and _STATIC_NAME.match(entry.name)
    }


def static_url(name: str) -> str:
    """The URL of a bundled static file, versioned by its content so caches never serve an old one."""
    digest = hashlib.sha256(_static_files()[name]).hexdigest()[:12]
    return f"/ui/static/{name}?v={digest}"


def id_path(value: object) -> str:
    return quote(str(value), safe=_ID_SAFE)


def short_id(value: object, keep: int = 12) -> str:
    """``pk:sha256:31abff731653…``: an ID short enough for a table cell; the full one is in its title."""
    text = str(value)
    prefix, _, digest = text.rpartition(":")
    if prefix and len(digest) > keep:
        return f"{prefix}:{digest[:keep]}…"
    return text


def when(value: object) -> str:
    if isinstance(value, datetime):
        return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return "" if value is None else str(value)


def display_path(source: Any) -> str:
    """Where a source lives, as the packet's rows name it: ``docs/guide.md`` for ``file:docs/guide.md``."""
    uri = str(getattr(source, "canonical_uri", "") or "")
    return uri.removeprefix("file:") if uri else str(getattr(source, "path", ""))


def score_text(value: float | None) -> str:
    return "not recorded" if value is None else f"{value:.2f}"


@cache
def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader(UI_PACKAGE, "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters.update(
        id_path=id_path, short_id=short_id, when=when, score=score_text, display_path=display_path
    )
    environment.globals.update(static_url=static_url, version=__version__)
    return environment


def render(template: str, *, status_code: int = 200, **context: Any) -> HTMLResponse:
    html = _environment().get_template(template).render(**context)
    headers = {**SECURITY_HEADERS, "Cache-Control": "no-store"}
    return HTMLResponse(html, status_code=status_code, headers=headers)


def not_found(kind: str, identifier: str) -> HTMLResponse:
    # The same page for an unknown ID and for one outside the manifest's scope.
    return render(
        "not_found.html", status_code=404, title=f"No such {kind}", kind=kind, identifier=identifier
    )


# ---- the packet page's view of the stored packet ----------------------------------------------


@dataclass(frozen=True)
class SourceLine:
    number: int | None
    text: str
    highlighted: bool


@dataclass(frozen=True)
class CitedRow:
    evidence_id: str
    number: int
    source_id: str
    path: str
    title: str | None
    revision: str
    checksum: str
    checksum_algorithm: str
    locator: Mapping[str, Any]
    lines_read: str | None
    read_at: str | None
    checksum_match: bool | None
    state: str
    label: str | None
    note: str | None
    score: float | None
    before: list[str]
    lines: list[SourceLine]
    after: list[str]

    @property
    def line_span(self) -> str:
        numbered = [line.number for line in self.lines if line.number is not None]
        if not numbered:
            return "the locator's passage"
        first, last = numbered[0], numbered[-1]
        return f"line {first}" if first == last else f"lines {first}–{last}"


@dataclass(frozen=True)
class ClaimView:
    number: int
    claim_id: str
    text: str
    status: str
    importance: str
    claim_class: str
    notes: str
    score: float | None
    rows: list[CitedRow] = field(default_factory=list)


def _text_lines(text: object) -> list[str]:
    return str(text).splitlines() if text else []


def _highlighted_lines(excerpt: str, locator: Mapping[str, Any]) -> list[SourceLine]:
    """The excerpt's lines, numbered from the locator's first line when it records one."""
    start = locator.get("startLine")
    lines = _text_lines(excerpt) or [""]
    if isinstance(start, int) and start > 0:
        return [SourceLine(start + offset, line, True) for offset, line in enumerate(lines)]
    return [SourceLine(None, line, True) for line in lines]


def note_score(note: str | None) -> float | None:
    """The support score a verifier's judgement note states, if it states one."""
    match = _NOTE_SCORE.search(note or "")
    return float(match.group(1)) if match else None


def _recorded_score(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _cited_row(row: Mapping[str, Any], number: int, judgement: Mapping[str, Any] | None) -> CitedRow:
    source = row.get("source") or {}
    version = source.get("version") or {}
    scope = row.get("scope") or {}
    locator = scope.get("locator") or {}
    content = row.get("content") or {}
    verification = row.get("verification") or {}
    read = verification.get("directRead") or {}
    note = (judgement or {}).get("note")
    return CitedRow(
        evidence_id=str(row.get("evidenceId", "")),
        number=number,
        source_id=str(source.get("sourceId", "")),
        path=str(source.get("canonicalPath") or source.get("canonicalUri") or ""),
        title=source.get("title"),
        revision=str(version.get("revision", "")),
        checksum=str(version.get("checksum", "")),
        checksum_algorithm=str(version.get("checksumAlgorithm", "sha256")),
        locator=locator,
        lines_read=read.get("locatorRead"),
        read_at=read.get("readAt"),
        checksum_match=read.get("checksumMatch"),
        state=str(verification.get("state", "")),
        label=(judgement or {}).get("label"),
        note=note,
        # The score recorded with the judgement; older records state it only in the note.
        score=recorded
        if (recorded := _recorded_score((judgement or {}).get("score"))) is not None
        else note_score(note),
        before=_text_lines(content.get("before")),
        lines=_highlighted_lines(str(content.get("excerpt") or ""), locator),
        after=_text_lines(content.get("after")),
    )


def packet_claims(packet: Mapping[str, Any], judgements: Mapping[str, Sequence[Any]]) -> list[ClaimView]:
    """Each claim of ``packet`` with the rows it relies on; ``judgements`` maps a claim ID to the
    verifier's support records (``SupportRowOut``) for it in this packet."""
    rows = [row for row in packet.get("evidenceRows") or [] if isinstance(row, Mapping)]
    by_id = {str(row.get("evidenceId")): row for row in rows}
    numbers = {evidence_id: index for index, evidence_id in enumerate(by_id, start=1)}
    claims = []
    for index, claim in enumerate(packet.get("claims") or [], start=1):
        claim_id = str(claim.get("claimId", ""))
        support = {item.evidence_id: item for item in judgements.get(claim_id, [])}
        cited = []
        for evidence_id in dict.fromkeys(claim.get("supportRowIds") or []):
            row = by_id.get(str(evidence_id))
            if row is None:
                continue
            record = support.get(str(evidence_id))
            judgement = (
                {"label": record.label, "note": record.note, "score": record.support_score}
                if record is not None
                else None
            )
            cited.append(_cited_row(row, numbers[str(evidence_id)], judgement))
        stored_score = claim.get("supportScore")
        row_scores = [row.score for row in cited if row.score is not None]
        score = (
            float(stored_score)
            if isinstance(stored_score, int | float)
            else max(row_scores)
            if row_scores
            else None
        )
        claims.append(
            ClaimView(
                number=index,
                claim_id=claim_id,
                text=str(claim.get("claimText", "")),
                status=str(claim.get("status", "")),
                importance=str(claim.get("importance", "")),
                claim_class=str(claim.get("claimClass", "")),
                notes=str(claim.get("notes", "")),
                score=score,
                rows=cited,
            )
        )
    return claims


def uncited_rows(packet: Mapping[str, Any], claims: Sequence[ClaimView]) -> list[CitedRow]:
    """The packet's rows that no claim relies on (read, but not used as support)."""
    cited = {row.evidence_id for claim in claims for row in claim.rows}
    rows = [row for row in packet.get("evidenceRows") or [] if isinstance(row, Mapping)]
    return [
        _cited_row(row, number, None)
        for number, row in enumerate(rows, start=1)
        if str(row.get("evidenceId")) not in cited
    ]


# ---- routes ------------------------------------------------------------------------------------


@router.get("", response_class=HTMLResponse)
def viewer_root() -> Response:
    return RedirectResponse("/ui/", status_code=308)


@router.get("/", response_class=HTMLResponse, dependencies=[Depends(require_scope("ask"))])
def ask_page(limits: LimitsDep, question: str = "") -> HTMLResponse:
    # ``?question=`` fills the form (a link to a question); the page never asks by itself.
    return render(
        "ask.html",
        title="Ask",
        max_question_chars=limits.max_question_chars,
        question=question[: limits.max_question_chars],
    )


@router.get("/static/{name}")
def static_file(name: str) -> Response:
    files = _static_files()
    if name not in files:
        return not_found("file", name)
    media_type = _STATIC_TYPES[name[name.rindex(".") :]]
    headers = {"Cache-Control": "public, max-age=3600", "X-Content-Type-Options": "nosniff"}
    return Response(files[name], media_type=media_type, headers=headers)


@router.get("/packets/{packet_id}", response_class=HTMLResponse)
def packet_page(packet_id: str, audit: AuditDep) -> HTMLResponse:
    try:
        packet = audit.packet(packet_id)
        judgements: dict[str, list[Any]] = {}
        for claim in packet.get("claims") or []:
            claim_id = str(claim.get("claimId", ""))
            occurrences = audit.claim(claim_id).occurrences if claim_id else []
            judgements[claim_id] = next(
                (item.support for item in occurrences if item.packet_id == packet_id), []
            )
        history = audit.packet_history(packet_id)
    except NotFoundError:
        return not_found("packet", packet_id)
    verification = packet.get("verification") or {}
    claims = packet_claims(packet, judgements)
    return render(
        "packet.html",
        title="Packet",
        packet_id=packet_id,
        question=str((packet.get("query") or {}).get("original", "")),
        generated_at=str(packet.get("generatedAt", "")),
        verdict=str(verification.get("verdict", "NOT_TESTED")),
        reasons=[str(reason) for reason in verification.get("verdictReasons") or []],
        claims=claims,
        other_rows=uncited_rows(packet, claims),
        events=history.events,
    )


@dataclass(frozen=True)
class FilterForm:
    values: dict[str, str]
    errors: dict[str, str]

    def query(self, **extra: object) -> str:
        items = {name: value for name, value in self.values.items() if value}
        items.update({name: str(value) for name, value in extra.items()})
        return urlencode(items)


def _time_filter(raw: str, name: str, errors: dict[str, str]) -> datetime | None:
    if not raw:
        return None
    try:
        parsed = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        errors[name] = "not a date and time in ISO 8601 form (for example 2026-12-01T08:00:00Z)"
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


@router.get("/rejections", response_class=HTMLResponse)
def rejections_page(
    audit: AuditDep,
    limits: LimitsDep,
    stage: str = "",
    reason: str = "",
    source: str = "",
    packet: str = "",
    since: str = "",
    until: str = "",
    offset: int = 0,
) -> HTMLResponse:
    values = {
        "stage": stage.strip(),
        "reason": reason.strip(),
        "source": source.strip(),
        "packet": packet.strip(),
        "since": since.strip(),
        "until": until.strip(),
    }
    errors = {
        name: f"at most {FILTER_MAX_CHARS} characters"
        for name, value in values.items()
        if len(value) > FILTER_MAX_CHARS
    }
    start = _time_filter(values["since"], "since", errors)
    end = _time_filter(values["until"], "until", errors)
    offset = min(max(offset, 0), 1_000_000)
    form = FilterForm(values, errors)
    if errors:
        return render("rejections.html", status_code=422, title="Rejection log", form=form, page=None)
    visible_packet = True
    if values["packet"]:
        # A packet outside the scope filters to nothing, exactly like an unknown one.
        try:
            audit.packet(values["packet"])
        except NotFoundError:
            visible_packet = False
    filters = RejectionFilters(
        reason=values["reason"] or None,
        stage=values["stage"] or None,
        source=values["source"] or None,
        since=start,
        until=end,
        packet_id=values["packet"] or None,
    )
    page = audit.rejections(filters, limit=limits.default_page_size, offset=offset)
    if not visible_packet:
        page = page.model_copy(update={"items": [], "has_more": False, "next_offset": None})
    return render("rejections.html", title="Rejection log", form=form, page=page)


@router.get("/sources", response_class=HTMLResponse)
def sources_page(audit: AuditDep, limits: LimitsDep, after: str = "") -> HTMLResponse:
    page = audit.sources(after=after or None, limit=limits.default_page_size)
    return render("sources.html", title="Sources", page=page)


@router.get("/sources/{source_id:path}", response_class=HTMLResponse)
def source_page(source_id: str, audit: AuditDep) -> HTMLResponse:
    try:
        source = audit.source(source_id)
        dependents = audit.source_dependents(source_id)
    except NotFoundError:
        return not_found("source", source_id)
    return render("source.html", title="What depends on this source", source=source, dependents=dependents)
