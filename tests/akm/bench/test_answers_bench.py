"""akm bench answers: SQuAD normalisation, the throwaway project, and a whole run through the service."""

from __future__ import annotations

import json
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from akm.answer import EvidencePrompt, GeneratedAnswer
from akm.bench.answers import (
    contains_gold,
    hold_out_paragraphs,
    load_squad,
    normalize_answer,
    page_text,
    pick_questions,
    split_articles,
)
from akm.cli import main
from akm.runtime import Runtime
from decoding.bench.errors import BenchmarkInputError

SQUAD = {
    "version": "1.1",
    "data": [
        {
            "title": "Kestrel_Harbour_Bridge",
            "paragraphs": [
                {
                    "context": "The Kestrel Harbour Bridge is a steel arch bridge in Marlow Bay. "
                    "It was opened to traffic on 19 March 1932 by the mayor, Edith Carrow.",
                    "qas": [
                        {
                            "id": "q1",
                            "question": "When was the Kestrel Harbour Bridge opened to traffic?",
                            "answers": [{"text": "19 March 1932", "answer_start": 104}],
                        },
                        {
                            "id": "q2",
                            "question": "Which mayor opened the Kestrel Harbour Bridge to traffic?",
                            "answers": [{"text": "Edith Carrow", "answer_start": 140}],
                        },
                    ],
                }
            ],
        },
        {
            "title": "Honey_bees",
            "paragraphs": [
                {
                    "context": "A honey bee queen can lay up to 2,000 eggs a day in early summer.",
                    "qas": [
                        {
                            "id": "q3",
                            "question": "How many eggs can a honey bee queen lay in a day?",
                            "answers": [{"text": "2,000", "answer_start": 32}],
                        }
                    ],
                }
            ],
        },
    ],
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("The Eiffel Tower!", "eiffel tower", id="article-and-punctuation"),
        pytest.param("  A  cat, an owl ", "cat owl", id="articles-and-spaces"),
        pytest.param("“Quoted” – text", "quoted text", id="typographic-punctuation"),
    ],
)
def test_normalize_answer(text: str, expected: str) -> None:
    assert normalize_answer(text) == expected


def test_gold_counts_only_as_whole_words() -> None:
    assert contains_gold("It opened in 1932, to great applause.", ["1932"])
    assert not contains_gold("It opened in 19321.", ["1932"])
    assert not contains_gold("Nothing here.", ["1932", ""])


def test_project_pages_and_splits(tmp_path: Path) -> None:
    path = tmp_path / "squad.json"
    path.write_text(json.dumps(SQUAD), encoding="utf-8")
    articles = load_squad(path)
    assert page_text(articles[0]).startswith("# Kestrel Harbour Bridge\n\nThe Kestrel Harbour Bridge is")
    assert [q.question_id for q in pick_questions(articles, every=2)] == ["q1", "q3"]
    ingested, asked = split_articles(articles, unanswerable=True)
    assert ([a.title for a in ingested], [a.title for a in asked]) == (
        ["Kestrel_Harbour_Bridge"],
        ["Honey_bees"],
    )


# One article of three paragraphs: the middle one (paragraph 1) is held out. Its first question's
# answer stands in paragraph 0 too, so it stays answerable and is not asked; the second's does not.
HELD_OUT = {
    "version": "1.1",
    "data": [
        {
            "title": "Skerryvore",
            "paragraphs": [
                {
                    "context": "Skerryvore Lighthouse stands on a reef off Tiree and is 48 metres tall.",
                    "qas": [
                        {
                            "id": "h0",
                            "question": "How tall is Skerryvore Lighthouse?",
                            "answers": [{"text": "48 metres", "answer_start": 57}],
                        }
                    ],
                },
                {
                    "context": "It stands off Tiree. The light was automated in 1994.",
                    "qas": [
                        {
                            "id": "h1",
                            "question": "What island is Skerryvore off?",
                            "answers": [{"text": "Tiree", "answer_start": 14}],
                        },
                        {
                            "id": "h2",
                            "question": "When was the Skerryvore light automated?",
                            "answers": [{"text": "1994", "answer_start": 48}],
                        },
                    ],
                },
                {"context": "Granite for the tower came from the island of Mull.", "qas": []},
            ],
        }
    ],
}


def test_held_out_mode_asks_only_what_the_kept_paragraphs_do_not_answer(tmp_path: Path) -> None:
    path = tmp_path / "held.json"
    path.write_text(json.dumps(HELD_OUT), encoding="utf-8")
    kept, asked = hold_out_paragraphs(load_squad(path))
    assert kept[0].paragraphs == (
        "Skerryvore Lighthouse stands on a reef off Tiree and is 48 metres tall.",
        "Granite for the tower came from the island of Mull.",
    )
    assert [q.question_id for q in kept[0].questions] == ["h0"]
    assert [q.question_id for q in pick_questions(asked)] == ["h2"]


def test_held_out_needs_a_second_paragraph(tmp_path: Path) -> None:
    path = tmp_path / "squad.json"
    path.write_text(json.dumps(SQUAD), encoding="utf-8")
    with pytest.raises(BenchmarkInputError, match="at least two paragraphs"):
        hold_out_paragraphs(load_squad(path))


@pytest.mark.parametrize(
    "content",
    [pytest.param("{not json", id="malformed"), pytest.param('{"data": [{"title": "x"}]}', id="not-squad")],
)
def test_bad_squad_file_is_refused(tmp_path: Path, content: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(BenchmarkInputError, match="SQuAD"):
        load_squad(path)


class CopiesTheSentences:
    """A generator that answers with the sentences it was shown, as a copying model would."""

    def stream(
        self, prompt: EvidencePrompt, *, max_new_tokens: int, temperature: float, seed: int | None
    ) -> Generator[str, None, GeneratedAnswer]:
        text = prompt.passages[0] if prompt.passages else ""
        yield text
        return GeneratedAnswer(text, {"new_tokens": 5, "target_calls": 2})


def test_a_whole_run_through_the_service(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "squad.json"
    path.write_text(json.dumps(SQUAD), encoding="utf-8")
    monkeypatch.setenv("AKM_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("AKM_EMBEDDING_MODEL", "hashing")
    generator: Any = CopiesTheSentences()
    monkeypatch.setattr(Runtime, "_load_generator", lambda self: generator)
    out = tmp_path / "answers.json"
    assert main(["bench", "answers", "--squad", str(path), "--json", str(out)]) == 0
    document = json.loads(out.read_text(encoding="utf-8"))
    summary = document["summary"]
    assert summary["questions"] == 3
    assert summary["gold_in_supported_claim"] == 1.0
    assert summary["pass_precision"] == 1.0
    assert {"verdicts", "abstained", "claim_statuses", "latency_ms", "decode", "answer_words_median"} <= set(
        summary
    )
    assert summary["latency_ms"]["total"]["p50"] is not None
    first = document["questions"][0]
    assert first["verdict"] == "PASS" and first["goldInSupportedClaim"]
    assert first["directReadLocators"] and first["claims"][0]["status"] == "supported"
    err = capsys.readouterr().err
    assert "[3/3]" in err


def _run_bench(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, squad: dict[str, Any], *flags: str
) -> dict[str, Any]:
    """A whole `akm bench answers` run over `squad` with the copying generator; its JSON document."""
    path = tmp_path / "squad.json"
    path.write_text(json.dumps(squad), encoding="utf-8")
    monkeypatch.setenv("AKM_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("AKM_EMBEDDING_MODEL", "hashing")
    generator: Any = CopiesTheSentences()
    monkeypatch.setattr(Runtime, "_load_generator", lambda self: generator)
    out = tmp_path / "report.json"
    assert main(["bench", "answers", "--squad", str(path), *flags, "--json", str(out)]) == 0
    document: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return document


def test_unanswerable_run_abstains(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    summary = _run_bench(tmp_path, monkeypatch, SQUAD, "--unanswerable")["summary"]
    assert (summary["questions"], summary["abstained"], summary["mode"]) == (1, 1.0, "unanswerable")


def test_missing_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["bench", "answers", "--squad", str(tmp_path / "nope.json"), "--json", str(tmp_path / "o.json")]
    )
    assert code == 2
    assert "akm bench answers: cannot read" in capsys.readouterr().err


def test_held_out_run_abstains_on_the_topic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    document = _run_bench(tmp_path, monkeypatch, HELD_OUT, "--held-out")
    summary = document["summary"]
    # The page still names Skerryvore and its light, but says nothing of when it was automated.
    assert (summary["questions"], summary["mode"]) == (1, "held-out")
    assert summary["abstained"] == 1.0, document["questions"][0]["verdict"]
    assert document["command"]["held_out"] is True


def test_held_out_and_unanswerable_are_one_or_the_other(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["bench", "answers", "--squad", "x.json", "--held-out", "--unanswerable", "--json", "o.json"])
    assert exit_info.value.code == 2
