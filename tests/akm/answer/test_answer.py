"""The answer orchestration: prompt from direct reads only, claims checked, one transaction."""

from __future__ import annotations

import json
import re
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from akm.answer import AnswerOptions, EvidencePrompt, GeneratedAnswer, answer, tidy_answer
from akm.cli import main
from akm.packet import packet_findings
from akm.runtime import Runtime

CAP = "The manifest also sets the per-source cap (2 rows per source)."
# The whole sentence of docs/configuration.md that answers QUESTION, as a copying model writes it.
FULL = (
    "The manifest also sets the fusion method (`deterministic-priority` by default, `rrf` with k = 60 as a "
    "comparison), the per-source cap (2 rows per source) and the maximum number of fused rows (20)."
)
FULL_CLAIM = FULL.replace("`", "")
INVENTED = "The per-source cap was introduced in 1999 by the Mars team."
QUESTION = "What does the per-source cap limit?"


def _ask(corpus: Any, generator: Any, **options: Any) -> Any:
    return answer(
        QUESTION,
        AnswerOptions(**options),
        store=corpus.store,
        manifest=corpus.manifest,
        embedder=corpus.embedder,
        generator=generator,
    )


def test_prompt_holds_only_answer_bearing_sentences_of_direct_reads(corpus: Any) -> None:
    generator = corpus.generator(CAP)
    result = _ask(corpus, generator, max_rows=3)
    (prompt,) = generator.prompts
    read = [row for row in result.packet.evidence_rows if row.verification.direct_read is not None]
    sources = [(corpus.root / (row.source.canonical_path or "")).read_text(encoding="utf-8") for row in read]
    assert 1 <= len(prompt.passages) <= 2
    for sentence in prompt.passages:
        assert any(sentence in " ".join(source.split()) for source in sources), sentence
        assert sentence in prompt.user
    assert prompt.user.startswith(f"Question: {QUESTION}")
    assert "[E" not in prompt.system + prompt.user
    assert result.to_json()["selection"]["sentences"][0]["text"] in " ".join(sources)


def test_invented_claim_is_not_supported_and_strict_drops_it(corpus: Any) -> None:
    result = _ask(corpus, corpus.generator(f"{FULL} [E1] {INVENTED} [E1]"))
    assert [(claim.text, claim.status) for claim in result.claims] == [
        (FULL_CLAIM, "supported"),
        (INVENTED, "unsupported"),
    ]
    assert result.claims[1].citations == ()
    strict = _ask(corpus, corpus.generator(f"{FULL} [E1] {INVENTED} [E1]"), strict=True)
    assert strict.answer == FULL_CLAIM
    assert [claim.status for claim in strict.claims] == ["supported"]


def test_uncited_supported_claim_is_marked_attributed(corpus: Any) -> None:
    result = _ask(corpus, corpus.generator(CAP))
    (claim,) = result.claims
    assert (claim.status, claim.citation_mode) == ("supported", "attributed")
    assert "attributed by the verifier's alignment (not cited)" in result.packet.claims[0].notes


def test_decode_statistics_are_stored_beside_the_packet_not_in_evidence(corpus: Any) -> None:
    result = _ask(corpus, corpus.generator(f"{CAP} [E1]"))
    (stats,) = corpus.store.decode_stats(result.packet_id)
    assert stats["source"] == "fixed"
    assert set(stats["timings_ms"]) == {"retrieval", "direct_read", "selection", "decoding", "verification"}
    assert set(result.timings_ms) == {
        "retrieval",
        "direct_read",
        "selection",
        "decoding",
        "verification",
        "storage",
    }
    packet_text = json.dumps(result.packet.to_json())
    assert '"source": "fixed"' not in packet_text and "timings_ms" not in packet_text
    assert set(result.to_json()) == {
        "answer",
        "claims",
        "verdict",
        "packetId",
        "packet",
        "decode",
        "selection",
    }


def test_failed_generation_stores_nothing(corpus: Any) -> None:
    class Broken:
        def stream(
            self, prompt: EvidencePrompt, *, max_new_tokens: int, temperature: float, seed: int | None
        ) -> Generator[str, None, GeneratedAnswer]:
            yield from ()
            raise RuntimeError("generator failed")

    with pytest.raises(RuntimeError, match="generator failed"):
        _ask(corpus, Broken())
    assert corpus.store.count_packets() == 0
    assert corpus.store.list_rejections() == []


def _cli_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, corpus: Any) -> None:
    monkeypatch.setenv("AKM_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("AKM_MANIFEST_PATH", str(corpus.root / "config" / "manifest.yaml"))
    monkeypatch.setenv("AKM_EMBEDDING_MODEL", "hashing")


def test_cli_ask_ingests_an_empty_store_and_prints_one_json_object(
    corpus: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _cli_env(monkeypatch, tmp_path, corpus)
    monkeypatch.setattr(Runtime, "_load_generator", lambda self: corpus.generator(f"{CAP} [E1]"))
    assert main(["ask", QUESTION, "--json"]) == 0
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert set(document) == {"answer", "claims", "verdict", "packetId", "packet", "decode", "selection"}
    assert document["verdict"]["verdict"] == "PASS", document["verdict"]
    assert document["packet"]["packetId"] == document["packetId"]
    assert packet_findings(document["packet"]) == []
    (claim,) = document["claims"]
    (citation,) = claim["citations"]
    assert citation["sourcePath"] == "docs/configuration.md"
    assert set(citation) == {"evidenceId", "evidenceNumber", "sourcePath", "locator", "revision"}
    assert "ingesting the manifest's sources first" in captured.err


def test_cli_ask_says_which_files_its_first_ingest_left_out(
    corpus: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A plain-text note is read like Markdown; an HTML page is outside the default manifest, and the
    # user is told so, with the patterns it admits, instead of a silent "no passage answers".
    (corpus.root / "docs" / "notes.txt").write_text(
        "Ferries to Holm Island\n\nThe night ferry leaves from pier 3 at eleven. Tickets are sold on board.\n",
        encoding="utf-8",
    )
    (corpus.root / "docs" / "page.html").write_text("<p>The bus leaves at noon.</p>", encoding="utf-8")
    _cli_env(monkeypatch, tmp_path, corpus)
    monkeypatch.setattr(
        Runtime,
        "_load_generator",
        lambda self: corpus.generator("The night ferry leaves from pier 3 at eleven."),
    )
    assert main(["ask", "Where does the night ferry leave from?", "--json"]) == 0
    captured = capsys.readouterr()
    assert "left out 1 file(s) (count only): not-included 1" in captured.err
    assert "the manifest admits docs/**/*.markdown, docs/**/*.md, docs/**/*.txt" in captured.err
    assert "page.html" not in captured.err  # counts only, never names
    document = json.loads(captured.out)
    assert document["verdict"]["verdict"] == "PASS", document["verdict"]
    assert [citation["sourcePath"] for claim in document["claims"] for citation in claim["citations"]] == [
        "docs/notes.txt"
    ]


def test_cli_ask_prints_claim_states_citations_verdict_and_packet(
    corpus: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _cli_env(monkeypatch, tmp_path, corpus)
    monkeypatch.setattr(Runtime, "_load_generator", lambda self: corpus.generator(f"{FULL} [E1] {INVENTED}"))
    assert main(["ask", QUESTION]) == 0
    out = capsys.readouterr().out
    assert f"[supported] {FULL_CLAIM}" in out
    assert f"[UNSUPPORTED] {INVENTED}" in out
    assert re.search(r"(?:cited|attributed) E\d docs/configuration.md", out)
    assert "Verdict: HOLD" in out
    assert "Packet: pk:sha256:" in out


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        pytest.param(["ask", "   "], 2, "akm ask: ", id="empty-question"),
        pytest.param(["ask", QUESTION, "--lanes", "telepathy"], 2, "unknown lane", id="unknown-lane"),
        pytest.param(["ask", QUESTION, "--max-rows", "0"], 2, "max rows must be at least 1", id="no-rows"),
    ],
)
def test_cli_ask_rejects_bad_input(
    corpus: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    code: int,
    message: str,
) -> None:
    _cli_env(monkeypatch, tmp_path, corpus)
    monkeypatch.setattr(Runtime, "_load_generator", lambda self: corpus.generator(CAP))
    assert main(argv) == code
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_cli_ask_reports_a_model_that_cannot_load(
    corpus: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _cli_env(monkeypatch, tmp_path, corpus)
    monkeypatch.setenv("AKM_TARGET_MODEL", str(tmp_path / "no-such-model"))
    assert main(["ask", QUESTION]) == 3
    err = capsys.readouterr().err
    assert "akm ask: the target model" in err and "could not be loaded" in err and "Traceback" not in err


@pytest.mark.real_model
@pytest.mark.slow
def test_real_model_answer_is_grounded_and_an_invented_claim_is_not(
    corpus: Any, smollm2_generator: Any
) -> None:
    class AppendsInvention:
        """The real answer with a fabricated sentence appended, as a hallucinating model would."""

        def stream(
            self, prompt: EvidencePrompt, *, max_new_tokens: int, temperature: float, seed: int | None
        ) -> Generator[str, None, GeneratedAnswer]:
            real = yield from smollm2_generator.stream(
                prompt, max_new_tokens=max_new_tokens, temperature=temperature, seed=seed
            )
            # A blank line keeps the invention a claim of its own even after a truncated sentence.
            return GeneratedAnswer(f"{real.text.strip()}\n\n{INVENTED}", real.decode)

    result = answer(
        "Where does the SQLite store live?",
        AnswerOptions(max_new_tokens=48, max_rows=3),
        store=corpus.store,
        manifest=corpus.manifest,
        embedder=corpus.embedder,
        generator=AppendsInvention(),
    )
    document = result.packet.to_json()
    assert packet_findings(document) == []
    corpus.check_upstream(document)
    supported_rows = [
        row for row in result.packet.evidence_rows if row.verification.state == "claim-supported"
    ]
    assert supported_rows, [claim.to_json() for claim in result.claims]
    # The invention is either checked and shown unsupported, or the answer quotes the passage instead.
    invented = [claim for claim in result.claims if claim.text == INVENTED]
    if result.selection["composition"] == "generated":
        assert [claim.status for claim in invented] == ["unsupported"]
    else:
        assert result.selection["composition"] == "quoted" and invented == []
        assert INVENTED in result.selection["generatedText"]
    assert all(claim.status == "supported" for claim in result.claims if claim.text != INVENTED)
    assert result.decode["new_tokens"] > 0 and result.decode["target_calls"] >= 1


@pytest.mark.parametrize(
    ("text", "complete", "expected"),
    [
        pytest.param(
            "The cap is two. The cap is two. Rows are read.",
            True,
            "The cap is two. Rows are read.",
            id="repeats-kept-once",
        ),
        pytest.param(
            "[E1] # Evidence states\n\nThe cap is two [E1].",
            True,
            "The cap is two [E1].",
            id="echoed-heading-dropped",
        ),
        pytest.param("The cap is two. Rows are", False, "The cap is two.", id="cut-off-sentence-dropped"),
        pytest.param(
            "Question: What is the cap? Answer: The cap is two.",
            True,
            "The cap is two.",
            id="prompt-labels-dropped",
        ),
        pytest.param("The cap is two. Rows are", True, "The cap is two. Rows are", id="finished-text-kept"),
        pytest.param(
            "Rows are\n\nThe cap is two.",
            True,
            "Rows are\n\nThe cap is two.",
            id="fragment-stays-its-own-block",
        ),
        pytest.param("The cap is two [E2]", False, "", id="cut-off-only-sentence"),
        pytest.param(
            "The cap is two. The answer is:\n\nThe cap is two. The answer is:\n\nThe cap",
            False,
            "The cap is two.",
            id="looping-lead-in-dropped",
        ),
        pytest.param(
            "The limits are: two rows. Reads are direct.",
            True,
            "The limits are: two rows. Reads are direct.",
            id="colon-inside-a-sentence-kept",
        ),
        pytest.param(
            "The cap is two. [E1]", False, "The cap is two. [E1]", id="citation-after-period-is-finished"
        ),
        pytest.param(
            "Produced Deploy: Only members of the group may deploy. Rows: The cap is two.",
            True,
            "Only members of the group may deploy. The cap is two.",
            id="title-case-labels-dropped",
        ),
        pytest.param(
            "Wrenfield: a deploy tool. The cap: two rows.",
            True,
            "Wrenfield: a deploy tool. The cap: two rows.",
            id="label-before-lower-case-kept",
        ),
        pytest.param(
            "The key to this answer is: Keys must be collected from the keyholder.",
            True,
            "Keys must be collected from the keyholder.",
            id="answer-preamble-dropped",
        ),
        pytest.param(
            "The answer is simple: two rows.", True, "The answer is simple: two rows.", id="answer-is-kept"
        ),
    ],
)
def test_tidy_answer(text: str, complete: bool, expected: str) -> None:
    assert tidy_answer(text, complete=complete) == expected


def test_question_is_recorded_as_searched(corpus: Any) -> None:
    result = answer(
        f"  {QUESTION}\n",
        AnswerOptions(),
        store=corpus.store,
        manifest=corpus.manifest,
        embedder=corpus.embedder,
        generator=corpus.generator(f"{CAP} [E1]"),
    )
    assert result.packet.query.original == QUESTION
    assert corpus.store.get_packet(result.packet_id) is not None
