"""The audit viewer's pages (/ui/) rendered by the app over the seeded store: what each page
shows, the manifest scope (an out-of-scope packet or source is a 404 page, its rejections are
anonymous), the rejection filters, escaping of hostile text, and the static bundle."""

from __future__ import annotations

import copy
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from api_fakes import (
    GUIDE,
    HIDDEN_BY_CLASSIFICATION,
    HIDDEN_BY_EXCLUDE,
    HIDDEN_BY_TOKEN,
    ApiHarness,
    FakeAnswerService,
    _add_source,
    build_app,
    packet_with_rows_from,
    unique_packet_id,
)
from fastapi.testclient import TestClient

from akm.api.routes.ui import note_score, packet_claims
from akm.settings import load_settings
from akm.store import EvidenceStore

HOSTILE = '<script>alert("owned")</script><img src=x onerror=alert(1)>'
ESCAPED = "&lt;script&gt;alert(&#34;owned&#34;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"


class _Controls(HTMLParser):
    """Collects form controls, labels, links and script sources of one page."""

    def __init__(self) -> None:
        super().__init__()
        self.controls: list[dict[str, str | None]] = []
        self.label_for: set[str] = set()
        self.links: list[tuple[str, str]] = []
        self.scripts: list[str] = []
        self.inline_scripts = 0
        self._link: dict[str, str | None] | None = None
        self._link_text: list[str] = []
        self._button: list[str] | None = None
        self.buttons: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag in ("input", "textarea", "select"):
            self.controls.append(attributes)
        elif tag == "label" and attributes.get("for"):
            self.label_for.add(str(attributes["for"]))
        elif tag == "a":
            self._link, self._link_text = attributes, []
        elif tag == "button":
            self._button = []
        elif tag == "script":
            if attributes.get("src"):
                self.scripts.append(str(attributes["src"]))
            else:
                self.inline_scripts += 1

    def handle_data(self, data: str) -> None:
        if self._link is not None:
            self._link_text.append(data)
        if self._button is not None:
            self._button.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._link is not None:
            self.links.append((str(self._link.get("href")), " ".join("".join(self._link_text).split())))
            self._link = None
        elif tag == "button" and self._button is not None:
            self.buttons.append("".join(self._button).strip())
            self._button = None


def controls_of(html: str) -> _Controls:
    parser = _Controls()
    parser.feed(html)
    return parser


def assert_accessible(html: str) -> _Controls:
    """Every control has a label; every link and button has text; no inline script."""
    page = controls_of(html)
    for control in page.controls:
        assert control.get("id") in page.label_for or control.get("aria-label"), control
    for href, text in page.links:
        assert text and text.lower() not in ("here", "click here", "link", "more"), (href, text)
    assert all(page.buttons), page.buttons
    assert page.inline_scripts == 0
    assert '<html lang="en">' in html
    return page


def get_page(api: ApiHarness, url: str, status: int = 200) -> str:
    response = api.client.get(url)
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("text/html")
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "default-src 'none'" in policy
    return response.text


def test_ask_page_has_a_labelled_form_and_a_live_answer_region(api: ApiHarness) -> None:
    html = get_page(api, "/ui/")
    page = assert_accessible(html)
    assert '<label for="question">Question</label>' in html
    assert 'aria-live="polite"' in html and 'role="status"' in html
    assert page.buttons == ["Ask"]
    assert 'data-endpoint="/v1/answers"' in html
    [script] = page.scripts
    assert re.fullmatch(r"/ui/static/viewer\.js\?v=[0-9a-f]{12}", script)
    # Nothing is loaded from another origin.
    assert not re.search(r"""(src|href)=["'](https?:)?//""", html)
    assert api.client.get("/ui", follow_redirects=False).headers["location"] == "/ui/"
    # A link can fill the question in; markup in it stays text, and nothing is asked.
    filled = get_page(api, "/ui/?question=%3C/textarea%3E%3Cscript%3Ex()%3C/script%3E")
    assert "&lt;/textarea&gt;&lt;script&gt;x()&lt;/script&gt;</textarea>" in filled
    assert "<script>x()" not in filled
    assert api.answers.stored == []


def test_static_bundle_is_served_from_the_package(api: ApiHarness) -> None:
    script = api.client.get("/ui/static/viewer.js")
    assert script.status_code == 200
    assert script.headers["content-type"].startswith("text/javascript")
    assert "getReader" in script.text and "textContent" in script.text
    assert "innerHTML" not in script.text
    style = api.client.get("/ui/static/viewer.css")
    assert style.headers["content-type"].startswith("text/css")
    assert "http" not in style.text
    for name in ("missing.js", "..%2Fapp.py", "viewer.css.map"):
        assert api.client.get(f"/ui/static/{name}").status_code == 404


def test_packet_page_shows_claims_rows_revision_checksum_and_lines(api: ApiHarness) -> None:
    packet = api.store.get_packet(api.ids["packet"])
    assert packet is not None
    html = get_page(api, f"/ui/packets/{api.ids['packet']}")
    assert_accessible(html)
    assert packet["query"]["original"] in html
    assert '<span id="packet-verdict" class="badge verdict-pass">PASS</span>' in html
    for claim in packet["claims"]:
        assert claim["claimText"] in html
        assert f'<dd class="claim-status">{claim["status"]}</dd>' in html
    for row in packet["evidenceRows"]:
        version = row["source"]["version"]
        assert f'<code class="row-checksum">{version["checksum"]}</code>' in html
        assert '<code class="row-revision">r1</code>' in html
        first_line = row["content"]["excerpt"].splitlines()[0]
        assert f"<mark>{first_line}" in html.replace("&#39;", "'")
    assert f'href="/ui/sources/{GUIDE}"' in html
    assert f"/ui/rejections?packet={api.ids['packet'].replace(':', '%3A')}" in html


@pytest.mark.parametrize("which", ["hidden_packet", "unknown"])
def test_out_of_scope_and_unknown_packets_are_the_same_404_page(api: ApiHarness, which: str) -> None:
    packet_id = api.ids.get(which, "pk:sha256:" + "0" * 64)
    html = get_page(api, f"/ui/packets/{packet_id}", status=404)
    assert "No such packet" in html
    # Nothing of the hidden packet leaks into the page.
    assert HIDDEN_BY_EXCLUDE not in html and "private-plan" not in html


def test_packet_page_lines_are_numbered_from_the_locator_and_scores_come_from_the_verifier() -> None:
    packet = packet_with_rows_from(GUIDE, unique_packet_id("numbered"))
    row = packet["evidenceRows"][0]
    row["scope"]["locator"].update(startLine=7, endLine=9)
    row["content"].update(excerpt="seven\neight\nnine", before="five\n", after="ten")
    claim = next(c for c in packet["claims"] if row["evidenceId"] in c["supportRowIds"])

    class Judgement:
        evidence_id = row["evidenceId"]
        label = "supported"
        note = "the claim quotes the passage; ... agree (support score 0.87)"
        # An older record: the score only in the note.
        support_score: float | None = None

    [view] = [
        c for c in packet_claims(packet, {claim["claimId"]: [Judgement()]}) if c.claim_id == claim["claimId"]
    ]
    [cited] = [r for r in view.rows if r.evidence_id == row["evidenceId"]]
    assert [(line.number, line.text) for line in cited.lines] == [(7, "seven"), (8, "eight"), (9, "nine")]
    assert cited.before == ["five"] and cited.after == ["ten"]
    assert cited.line_span == "lines 7–9"
    assert cited.score == 0.87 and view.score == 0.87
    assert note_score("support score 0.40 is below the threshold 0.55") == 0.40
    assert note_score("no score here") is None
    # The score recorded with the judgement wins over the note's, even when it is 0.
    recorded = Judgement()
    recorded.support_score = 0.0
    [scored] = [
        c for c in packet_claims(packet, {claim["claimId"]: [recorded]}) if c.claim_id == claim["claimId"]
    ]
    assert [r.score for r in scored.rows if r.evidence_id == row["evidenceId"]] == [0.0]
    # A score the packet records for the claim itself wins over the notes.
    claim["supportScore"] = 0.5
    [again] = [c for c in packet_claims(packet, {}) if c.claim_id == claim["claimId"]]
    assert again.score == 0.5


def _hostile_packet(api: ApiHarness) -> dict[str, Any]:
    packet = packet_with_rows_from(GUIDE, unique_packet_id("hostile"))
    packet["query"]["original"] = "Why " + HOSTILE
    for claim in packet["claims"]:
        claim["claimText"] = "Claim " + HOSTILE
    for row in packet["evidenceRows"]:
        row["content"]["excerpt"] = "line one\n" + HOSTILE
        row["source"]["title"] = HOSTILE
    with api.store.transaction() as tx:
        tx.save_rows(packet["evidenceRows"])
        tx.save_packet(packet)
    return packet


def test_hostile_question_answer_and_source_text_render_as_text(api: ApiHarness) -> None:
    packet = _hostile_packet(api)
    html = get_page(api, f"/ui/packets/{packet['packetId']}")
    assert "<script>" not in html and "<img" not in html
    assert html.count(ESCAPED) >= 3  # the question, a claim, a cited line
    assert controls_of(html).inline_scripts == 0

    hostile_id = "akm:docs:hostile-<b>bold</b>.md"
    _add_source(api.store, hostile_id, "hostile-<b>bold</b>.md", "public", [HOSTILE])
    with api.store.transaction() as tx:
        tx.upsert_source(
            source_id=hostile_id,
            root_alias="docs",
            path="hostile-<b>bold</b>.md",
            canonical_uri="file:docs/hostile-<b>bold</b>.md",
            source_type="markdown",
            classification="public",
            source_ref_id="akm-evidence:docs:public-markdown",
            title=HOSTILE,
        )
    listing = get_page(api, "/ui/sources")
    assert "<b>bold</b>" not in listing and "<script>" not in listing
    assert "hostile-&lt;b&gt;bold&lt;/b&gt;.md" in listing
    source = get_page(api, "/ui/sources/akm:docs:hostile-%3Cb%3Ebold%3C/b%3E.md")
    assert "<script>" not in source and ESCAPED in source

    echoed = get_page(api, "/ui/rejections?stage=%22%3E%3Cscript%3Ealert(1)%3C/script%3E")
    assert "<script>" not in echoed
    assert 'value="&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"' in echoed


def _rejection_rows(html: str) -> list[tuple[str, str]]:
    return re.findall(
        r'<td class="rejection-stage">([^<]*)</td>\s*<td class="rejection-reason">([^<]*)</td>', html
    )


def test_rejection_log_filters_like_the_api(api: ApiHarness) -> None:
    html = get_page(api, "/ui/rejections")
    assert_accessible(html)
    everything = _rejection_rows(html)
    assert len(everything) == len(api.client.get("/v1/audit/rejections").json()["items"]) == 4
    # The out-of-scope source's rejection is counted but not named.
    assert HIDDEN_BY_EXCLUDE not in html and "private-plan" not in html

    assert set(_rejection_rows(get_page(api, "/ui/rejections?stage=fusion"))) == {
        ("fusion", "duplicate"),
        ("fusion", "per-source-cap"),
    }
    assert _rejection_rows(get_page(api, "/ui/rejections?reason=stale")) == [("direct-read", "stale")]
    assert len(_rejection_rows(get_page(api, f"/ui/rejections?source={GUIDE}"))) == 3
    assert _rejection_rows(get_page(api, f"/ui/rejections?stage=fusion&source={GUIDE}&reason=duplicate")) == [
        ("fusion", "duplicate")
    ]
    by_packet = get_page(api, f"/ui/rejections?packet={api.ids['packet']}")
    assert _rejection_rows(by_packet) == [("fusion", "duplicate")]
    assert f'value="{api.ids["packet"]}"' in by_packet
    # Out-of-scope source or packet: nothing, the same as an unknown one.
    for hidden in (f"source={HIDDEN_BY_EXCLUDE}", f"packet={api.ids['hidden_packet']}", "stage=nothing"):
        page = get_page(api, f"/ui/rejections?{hidden}")
        assert _rejection_rows(page) == []
        assert "No rejection matches these filters." in page
    # Empty fields (a submitted form) mean no filter.
    assert len(_rejection_rows(get_page(api, "/ui/rejections?stage=&reason=&source=&packet="))) == 4
    future = get_page(api, "/ui/rejections?since=2999-01-01T00:00:00Z")
    assert _rejection_rows(future) == []


def test_rejection_log_explains_a_bad_filter(api: ApiHarness) -> None:
    html = get_page(api, "/ui/rejections?since=yesterday&stage=" + "x" * 600, status=422)
    assert 'aria-invalid="true"' in html
    assert "Since: not a date and time in ISO 8601 form" in html
    assert "Stage: at most 512 characters" in html
    assert "<table" not in html


def test_rejection_log_pages_forward(api: ApiHarness) -> None:
    from akm.store import Rejection

    with api.store.transaction() as tx:
        tx.record_rejections([Rejection(stage="fusion", reason="duplicate", source_id=GUIDE)] * 60)
    first = get_page(api, "/ui/rejections?stage=fusion")
    assert len(_rejection_rows(first)) == 50
    [(href, text)] = [link for link in controls_of(first).links if "offset=" in link[0]]
    assert text == "Next 50 rejections"
    assert "stage=fusion" in href
    second = get_page(api, href.replace("&amp;", "&"))
    assert len(_rejection_rows(second)) == 3 + 60 - 50  # the seeded three and the sixty


def test_source_page_shows_what_relied_on_each_revision(api: ApiHarness) -> None:
    html = get_page(api, f"/ui/sources/{GUIDE}")
    assert_accessible(html)
    body = api.client.get(f"/v1/audit/sources/{GUIDE}/dependents").json()
    assert [entry["revision"] for entry in body["revisions"]] == ["r1", "r2"]
    assert "Revision <code>r1</code>" in html and "Revision <code>r2</code> (current)" in html
    # The packet read revision r1, which is no longer current: stale, and linked.
    assert f'href="/ui/packets/{api.ids["packet"]}"' in html
    assert body["stalePacketIds"] == [api.ids["packet"]]
    assert "1 packet relied on a revision that is no longer current." in html
    assert f"/ui/rejections?source={GUIDE.replace(':', '%3A')}" in html
    listing = get_page(api, "/ui/sources")
    assert f'href="/ui/sources/{GUIDE}"' in listing
    for hidden in (HIDDEN_BY_EXCLUDE, HIDDEN_BY_CLASSIFICATION, HIDDEN_BY_TOKEN):
        assert hidden not in listing


@pytest.mark.parametrize(
    "source_id", [HIDDEN_BY_EXCLUDE, HIDDEN_BY_CLASSIFICATION, HIDDEN_BY_TOKEN, "akm:docs:unknown.md"]
)
def test_out_of_scope_and_unknown_sources_are_the_same_404_page(api: ApiHarness, source_id: str) -> None:
    html = get_page(api, f"/ui/sources/{source_id}", status=404)
    assert "No such source" in html
    assert api.client.get(f"/v1/audit/sources/{source_id}/dependents").status_code == 404


def test_viewer_routes_are_not_in_the_openapi_document(api: ApiHarness) -> None:
    paths = api.client.get("/openapi.json").json()["paths"]
    assert not [path for path in paths if path.startswith("/ui")]


def test_packet_page_of_a_packet_without_rows_or_claims(api: ApiHarness) -> None:
    packet = copy.deepcopy(packet_with_rows_from(GUIDE, unique_packet_id("empty")))
    packet["claims"] = []
    with api.store.transaction() as tx:
        tx.save_rows(packet["evidenceRows"])
        tx.save_packet(packet)
    html = get_page(api, f"/ui/packets/{packet['packetId']}")
    assert "The answer made no claims." in html


def test_with_api_keys_the_viewer_needs_audit_and_asking_also_needs_ask(
    seeded_store: EvidenceStore, tmp_path: Path
) -> None:
    tokens = {}
    with seeded_store.transaction() as tx:
        for name, scopes in {"ask": ["ask"], "audit": ["audit"], "both": ["ask", "audit"]}.items():
            tokens[name] = tx.create_api_key(scopes=scopes, name=name).token
    settings = load_settings(data_dir=tmp_path, require_api_keys=True, api_key_requests_per_minute=1000)
    app = build_app(seeded_store, FakeAnswerService(seeded_store), settings=settings)
    pages = ["/ui/rejections", f"/ui/sources/{GUIDE}", "/ui/sources", "/ui/static/viewer.css"]
    with TestClient(app, raise_server_exceptions=False) as client:

        def status(url: str, key: str | None) -> int:
            headers = {"Authorization": f"Bearer {tokens[key]}"} if key else {}
            return client.get(url, headers=headers).status_code

        for url in pages:
            assert (status(url, None), status(url, "ask"), status(url, "audit")) == (401, 403, 200), url
        assert (status("/ui/", "ask"), status("/ui/", "audit"), status("/ui/", "both")) == (403, 403, 200)
        forbidden = client.get("/ui/rejections", headers={"Authorization": f"Bearer {tokens['ask']}"})
        assert forbidden.json()["requiredScope"] == "audit"


def test_every_viewer_file_is_package_data() -> None:
    """The wheel carries each template and static file: pyproject's globs for akm.api.ui match them all,
    and the app finds them through importlib.resources."""
    import fnmatch
    import tomllib
    from importlib.resources import files

    repo = Path(__file__).resolve().parents[3]
    globs = tomllib.loads((repo / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"][
        "akm.api.ui"
    ]
    folder = repo / "akm" / "api" / "ui"
    data = [
        path.relative_to(folder).as_posix()
        for path in folder.rglob("*")
        if path.is_file() and path.suffix not in (".py", ".pyc")
    ]
    assert {"templates/base.html", "static/viewer.js", "static/viewer.css"} <= set(data)
    for name in data:
        assert any(fnmatch.fnmatch(name, pattern) for pattern in globs), name
        assert files("akm.api.ui").joinpath(name).read_bytes() == (folder / name).read_bytes()
