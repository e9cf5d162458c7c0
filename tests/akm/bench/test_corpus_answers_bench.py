"""akm bench corpus-answers over a small JSONL corpus made here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from akm.bench.corpus_answers import CorpusAnswerBenchmark, ExtractiveGenerator, load_claims, summarize
from akm.cli import main
from decoding.bench.errors import BenchmarkInputError

DOCUMENTS = [
    {
        "_id": "11",
        "title": "Tidal locking",
        "text": "The Moon is tidally locked to the Earth. It shows one face.",
    },
    {
        "_id": "12",
        "title": "Honey bees",
        "text": "Honey bees communicate the direction of food with a waggle dance.",
    },
    {
        "_id": "13",
        "title": "Basalt",
        "text": "Basalt forms when lava rich in iron and magnesium cools quickly.",
    },
]
CLAIMS = [
    {
        "id": 1,
        "claim": "The Moon is tidally locked to the Earth.",
        "label": "SUPPORTS",
        "evidence_docs": [{"doc_id": 11}],
    },
    {
        "id": 2,
        "claim": "Honey bees communicate with a waggle dance.",
        "label": "SUPPORTS",
        "evidence_docs": [{"doc_id": 12}],
    },
    {
        "id": 3,
        "claim": "Granite glaciers sing in October.",
        "label": "SUPPORTS",
        "evidence_docs": [{"doc_id": 99}],
    },
    {"id": 4, "claim": "Basalt is blue.", "label": "REFUTES", "evidence_docs": [{"doc_id": 13}]},
    {"id": 5, "claim": "No evidence here.", "label": "NOT_ENOUGH_INFO", "evidence_docs": []},
]


def _files(tmp_path: Path) -> tuple[Path, Path]:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(d) + "\n" for d in DOCUMENTS), encoding="utf-8")
    claims = tmp_path / "claims.jsonl"
    claims.write_text("".join(json.dumps(c) + "\n" for c in CLAIMS), encoding="utf-8")
    return corpus, claims


def test_claims_are_filtered_by_label_and_need_evidence(tmp_path: Path) -> None:
    _, claims = _files(tmp_path)
    assert [claim.claim_id for claim in load_claims(claims)] == ["1", "2", "3"]
    assert [claim.claim_id for claim in load_claims(claims, label=None)] == ["1", "2", "3", "4"]
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": 1}\n', encoding="utf-8")
    with pytest.raises(BenchmarkInputError, match=r"broken\.jsonl:1"):
        load_claims(broken)


def test_supported_rows_are_counted_only_where_the_gold_document_was_read(tmp_path: Path) -> None:
    corpus, claims = _files(tmp_path)
    bench = CorpusAnswerBenchmark(corpus=corpus, folder=tmp_path / "project")
    outcomes, ingest = bench.run(load_claims(claims), ExtractiveGenerator())
    by_id = {outcome.claim_id: outcome for outcome in outcomes}
    assert ingest["documents"] == 3
    assert by_id["1"].gold_retrieved and by_id["1"].gold_supported
    # The answer only repeats the claim asked: supported, yet it adds nothing, so no PASS.
    assert by_id["1"].verdict == "HOLD"
    assert by_id["2"].gold_retrieved and by_id["2"].gold_supported
    # Its gold document is not in the corpus: never counted as retrieved.
    assert not by_id["3"].gold_retrieved and not by_id["3"].gold_supported
    summary = summarize(outcomes)
    assert (summary["claims"], summary["goldRetrieved"]) == (3, 2)
    assert summary["supportedWhenGoldRetrievedRate"] == 1.0


def test_the_command_writes_its_json_and_refuses_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus, claims = _files(tmp_path)
    out = tmp_path / "out.json"
    argv = ["bench", "corpus-answers", "--corpus", str(corpus), "--claims", str(claims), "--json", str(out)]
    assert main(argv) == 0
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["summary"]["goldRetrieved"] == 2
    assert len(document["outcomes"]) == 3
    assert "claim-supported row when gold read    2 (1.0)" in capsys.readouterr().out
    missing = ["bench", "corpus-answers", "--corpus", str(tmp_path / "nope.jsonl"), "--claims", str(claims)]
    assert main([*missing, "--json", str(out)]) == 2
    assert "corpus file not found" in capsys.readouterr().err
