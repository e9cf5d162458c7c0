"""``akm bench ingest``: generated documents of every format are all ingested and measured."""

from __future__ import annotations

import argparse
import json
import sqlite3
from pathlib import Path

import pytest

from akm.bench.ingest import BenchSizes, format_table, run_ingest_benchmark, write_text_pdf
from akm.embedding import HashingEmbedder
from akm.ingest.content_types import PDF
from akm.ingest.formats import extract_document
from akm.settings import load_settings


def test_written_pdf_reads_back_line_for_line() -> None:
    pages = [["First (page) line", "back\\slash"], ["Second page"]]
    document = extract_document(PDF, write_text_pdf(pages))
    assert document.pages == 2
    assert document.text == "First (page) line\nback\\slash\nSecond page"


def test_every_generated_document_is_ingested(tmp_path: Path) -> None:
    sizes = BenchSizes(pdf_files=2, pdf_pages=3, html_files=2, docx_files=2, markdown_files=2)
    report = run_ingest_benchmark(tmp_path, sizes=sizes, embedder=HashingEmbedder(), embedder_name="hashing")
    formats = report["formats"]
    assert list(formats) == ["pdf", "html", "docx", "markdown"]
    assert formats["pdf"]["pages"] == 6 and formats["pdf"]["unit"] == "pages"
    for name, row in formats.items():
        assert row["ingested"] == row["files"] == 2, name
        assert row["denied"] == {} and row["noText"] == 0, name
        # The ingest writes exactly the chunks the extraction pass cut.
        assert row["chunksWritten"] == row["chunks"] > 0, name
        assert row["extractPerSecond"] > 0 and row["ingestPerSecond"] > 0, name
    target = report["targets"]["pdfExtractPagesPerSecond"]
    assert target["observed"] == formats["pdf"]["extractPerSecond"]
    assert target["met"] == (target["observed"] >= 20.0)
    table = format_table(report)
    assert "pdf" in table and "pages/s" in table
    # Scripts, navigation and footers of the generated pages never reach the store.
    with sqlite3.connect(tmp_path / "bench.db") as connection:
        stored = [text for (text,) in connection.execute("SELECT text FROM chunks")]
    assert len(stored) == sum(row["chunks"] for row in formats.values())
    assert not [text for text in stored if "not run" in text or "Footer text" in text or "Menu" in text]


def _run(argv: list[str]) -> int:
    from akm.cli.bench import register

    parser = argparse.ArgumentParser(prog="akm")
    register(parser.add_subparsers())
    args = parser.parse_args(["bench", "ingest", *argv])
    return int(args.handler(args, load_settings()))


def test_command_writes_json_and_refuses_bad_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "ingest.json"
    small = [
        "--pdf-files",
        "1",
        "--pdf-pages",
        "2",
        "--html-files",
        "1",
        "--docx-files",
        "1",
        "--markdown-files",
        "1",
    ]
    assert _run([*small, "--json", str(out), "--keep", str(tmp_path / "kept")]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["formats"]["pdf"]["pages"] == 2
    assert (tmp_path / "kept" / "bench.db").is_file()
    assert "akm bench ingest:" in capsys.readouterr().out
    assert _run(["--pdf-pages", "0"]) == 2
    assert "--pdf-pages must be positive" in capsys.readouterr().err
    assert _run([*small, "--keep", str(tmp_path / "kept")]) == 2
    assert _run([*small, "--embedder", "no-such-model"]) == 2
