"""The verify benchmark: exact figures on a tiny fixture, input errors, the CLI, and the SciFact file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from akm.bench.verify import (
    CURVE_THRESHOLDS,
    ERROR_KINDS,
    VerifyCase,
    error_kind,
    run_verify_benchmark,
    summarise,
)
from akm.cli import main
from akm.verify import SupportJudgement
from decoding.bench.errors import BenchmarkInputError

SCIFACT_CLAIMS = (
    Path(__file__).resolve().parents[3]
    / ".."
    / "shared"
    / "datasets"
    / "scifact"
    / "claims-train-with-evidence.jsonl"
)


def document(doc_id: int, sentences: list[str], label: str, rationale: list[int]) -> dict[str, Any]:
    return {
        "doc_id": doc_id,
        "title": f"doc {doc_id}",
        "sentences": sentences,
        "label": label,
        "rationale_sets": [rationale] if rationale else [],
        "rationale_sentence_ids": rationale,
    }


FIXTURE: list[dict[str, Any]] = [
    {  # line 0, even: a true support, and a cited document without rationale (NEI)
        "id": 10,
        "claim": "The cache is enabled by default.",
        "label": "SUPPORTS",
        "evidence_docs": [
            document(1, ["Other things happen.", "The cache is enabled by default."], "SUPPORTS", [1]),
            document(2, ["Backups run nightly."], "NOT_ENOUGH_INFO", []),
        ],
    },
    {  # line 1, odd: a changed number
        "id": 11,
        "claim": "Median latency fell to 4 ms.",
        "label": "REFUTES",
        "evidence_docs": [document(3, ["Median latency fell to 3.5 ms."], "REFUTES", [0])],
    },
    {  # line 2, even: gold SUPPORTS that the verifier reads as a flipped direction
        "id": 12,
        "claim": "IL-6 levels increased in mice.",
        "label": "SUPPORTS",
        "evidence_docs": [document(4, ["IL-6 levels decreased in mice."], "SUPPORTS", [0])],
    },
    {  # line 3, odd: a false support on a refuted claim
        "id": 13,
        "claim": "Drug X increases mortality.",
        "label": "REFUTES",
        "evidence_docs": [document(5, ["Drug X increases mortality in adults."], "REFUTES", [0])],
    },
    {  # line 4, even
        "id": 14,
        "claim": "Aspirin prevents colds.",
        "label": "NOT_ENOUGH_INFO",
        "evidence_docs": [document(6, ["Aspirin was studied."], "NOT_ENOUGH_INFO", [])],
    },
]


@pytest.fixture
def claims_file(tmp_path: Path) -> Path:
    path = tmp_path / "claims.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in FIXTURE), encoding="utf-8")
    return path


def test_fixture_summary_is_exact(claims_file: Path) -> None:
    report = run_verify_benchmark(claims_file)
    seconds = report["summary"].pop("seconds")
    assert isinstance(seconds, float) and seconds >= 0.0
    assert report["summary"] == {
        "n_pairs": 6,
        "n_claims": 5,
        "gold_counts": {"SUPPORTS": 2, "REFUTES": 2, "NOT_ENOUGH_INFO": 2},
        "support_precision": 0.5,
        "support_recall": 0.5,
        "false_support_rate_refutes": 0.5,
        "false_support_rate_nei": 0.0,
        "contradiction_precision": 0.5,
        "contradiction_recall": 0.5,
        "confusion": {
            "SUPPORTS": {"supported": 1, "insufficient": 0, "contradicted": 1},
            "REFUTES": {"supported": 1, "insufficient": 0, "contradicted": 1},
            "NOT_ENOUGH_INFO": {"supported": 0, "insufficient": 2, "contradicted": 0},
        },
    }
    assert report["halves"]["even"]["confusion"]["SUPPORTS"] == {
        "supported": 1,
        "insufficient": 0,
        "contradicted": 1,
    }
    assert report["halves"]["odd"]["confusion"]["REFUTES"] == {
        "supported": 1,
        "insufficient": 0,
        "contradicted": 1,
    }
    assert (report["halves"]["even"]["n_pairs"], report["halves"]["odd"]["n_pairs"]) == (4, 2)
    assert report["supported_span_in_rationale"] == 1.0
    assert [(case["claim_id"], case["doc_id"], case["gold"]) for case in report["false_supports"]] == [
        ("13", "5", "REFUTES")
    ]


def test_limit_counts_lines(claims_file: Path) -> None:
    report = run_verify_benchmark(claims_file, limit=2)
    assert (report["summary"]["n_pairs"], report["summary"]["n_claims"]) == (3, 2)


def test_ratios_without_cases_are_none() -> None:
    summary = summarise([("NOT_ENOUGH_INFO", "insufficient")])
    assert (
        summary["support_precision"],
        summary["support_recall"],
        summary["false_support_rate_refutes"],
    ) == (
        None,
        None,
        None,
    )
    assert summary["false_support_rate_nei"] == 0.0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json\n", "claims.jsonl:1: not a claim with evidence_docs"),
        ('{"id": 1, "claim": "x"}\n', "claims.jsonl:1: not a claim with evidence_docs"),
        (
            '{"id": 1, "claim": "x", "label": "MAYBE", "evidence_docs": [{"doc_id": 1, "sentences": ["x"]}]}\n',
            "claims.jsonl:1: unknown label 'MAYBE'",
        ),
    ],
    ids=["malformed-json", "no-evidence-docs", "unknown-label"],
)
def test_bad_input_names_the_line(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "claims.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(BenchmarkInputError, match=message):
        run_verify_benchmark(path)


def test_cli_writes_json_and_prints_table(
    claims_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out" / "verify.json"
    code = main(
        ["--data-dir", str(tmp_path), "bench", "verify", "--claims", str(claims_file), "--json", str(out)]
    )
    assert code == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["summary"]["support_precision"] == 0.5
    printed = capsys.readouterr().out
    assert "support_precision                  0.5" in printed
    assert "5 claims" in printed


@pytest.mark.parametrize(
    ("extra", "code", "message"),
    [
        (
            ["--check"],
            1,
            "targets missed: false_support_rate_refutes 0.5 > 0.01; support_precision 0.5 < 0.95",
        ),
        (["--limit", "0"], 2, "--limit must be a positive number of lines"),
        (["--nli"], 2, "no NLI model configured"),
    ],
    ids=["check-fails-targets", "bad-limit", "nli-not-configured"],
)
def test_cli_exit_codes(
    claims_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    extra: list[str],
    code: int,
    message: str,
) -> None:
    monkeypatch.delenv("AKM_NLI_MODEL", raising=False)
    assert (
        main(["--data-dir", str(tmp_path), "bench", "verify", "--claims", str(claims_file), *extra]) == code
    )
    assert message in capsys.readouterr().err


def test_cli_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["--data-dir", str(tmp_path), "bench", "verify", "--claims", str(tmp_path / "absent.jsonl")])
        == 2
    )
    assert "cannot read claims file" in capsys.readouterr().err


@pytest.mark.datasets
def test_scifact_first_hundred_lines_rarely_support_falsely() -> None:
    if not SCIFACT_CLAIMS.is_file():
        pytest.skip(f"SciFact claims not found at {SCIFACT_CLAIMS} (../shared/datasets is absent)")
    report = run_verify_benchmark(SCIFACT_CLAIMS, limit=100)
    summary = report["summary"]
    assert summary["n_claims"] == 100
    assert summary["false_support_rate_refutes"] <= 0.05
    assert summary["false_support_rate_nei"] <= 0.05
    assert summary["confusion"]["SUPPORTS"]["supported"] >= 1


def test_curve_at_the_verifier_threshold_matches_the_verdicts(claims_file: Path) -> None:
    report = run_verify_benchmark(claims_file)
    curve = report["threshold_curve"]
    assert set(curve) == {"all", "even", "odd"}
    assert [point["threshold"] for point in curve["all"]] == list(CURVE_THRESHOLDS)
    at_setting = next(point for point in curve["all"] if point["threshold"] == report["support_threshold"])
    assert at_setting["support_precision"] == report["summary"]["support_precision"]
    assert at_setting["support_recall"] == report["summary"]["support_recall"]
    supported = [point["n_supported"] for point in curve["all"]]
    assert supported == sorted(supported, reverse=True), "a higher threshold can only support fewer"


def test_error_kinds_count_every_false_support_and_miss(claims_file: Path) -> None:
    report = run_verify_benchmark(claims_file)
    kinds = report["error_kinds"]
    confusion = report["summary"]["confusion"]
    false_supports = confusion["REFUTES"]["supported"] + confusion["NOT_ENOUGH_INFO"]["supported"]
    misses = confusion["SUPPORTS"]["insufficient"] + confusion["SUPPORTS"]["contradicted"]
    assert sum(kinds["false_supports_all"].values()) == false_supports
    assert sum(kinds["misses_all"].values()) == misses
    assert set(kinds["misses_all"]) == set(ERROR_KINDS)
    # Line 2 is a gold SUPPORTS claim the verifier reads as the opposite direction.
    assert kinds["misses_even"]["direction"] == 1


@pytest.mark.parametrize(
    ("claim", "window", "kind"),
    [
        ("Drug X increases mortality.", "Drug X decreased mortality and increased costs.", "direction"),
        ("A is higher than B.", "B is higher than A.", "roles"),
        ("Tea prevents colds.", "Some argue that tea prevents colds.", "attribution/hedging"),
        (
            "Ann Lee is the chair.",
            "Board: Ann Lee, treasurer; Bo Chan, chair; Cy Dow, clerk.",
            "list-membership",
        ),
        ("Sea ice is global.", "Global sea ice melts.", "same-words-other-relation"),
    ],
)
def test_a_false_support_is_classified_by_the_pair(claim: str, window: str, kind: str) -> None:
    case = VerifyCase(0, "1", claim, "2", window, (0,), frozenset(), "REFUTES")
    judgement = SupportJudgement("supported", (0, len(window)), "", "all-checks", {"coverage": 1.0}, 1.0)
    assert error_kind(case, judgement) == kind


def test_a_miss_is_classified_by_the_check_that_withheld_support() -> None:
    case = VerifyCase(0, "1", "claim", "2", "passage", (0,), frozenset(), "SUPPORTS")
    for decided_by, kind in (
        ("roles", "roles"),
        ("attribution", "attribution/hedging"),
        ("coverage", "other"),
    ):
        judgement = SupportJudgement("insufficient", None, "", decided_by, {}, 0.1)
        assert error_kind(case, judgement) == kind


def test_cli_writes_the_curve_plot_beside_the_json(claims_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "verify.json"
    assert (
        main(
            ["--data-dir", str(tmp_path), "bench", "verify", "--claims", str(claims_file), "--json", str(out)]
        )
        == 0
    )
    plot = out.with_suffix(".png")
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_threshold_flag(claims_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "verify.json"
    args = ["--data-dir", str(tmp_path), "bench", "verify", "--claims", str(claims_file), "--json", str(out)]
    assert main([*args, "--threshold", "0.99"]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["support_threshold"] == 0.99
    assert main([*args, "--threshold", "2"]) == 2
    assert "--threshold must be between 0 and 1" in capsys.readouterr().err
