"""Real PDF, HTML and DOCX files for the format tests, written with real libraries."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import docx
import yaml
from fpdf import FPDF

from .conftest import write_manifest

ALL_TYPES = [
    "text/markdown",
    "text/plain",
    "text/html",
    "application/pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
]


def pdf_bytes(pages: Sequence[Sequence[str | tuple[int, str]]], *, user_password: str | None = None) -> bytes:
    """A PDF with a text layer: one page per item, one text line per string, set in 11 points
    (a ``(size, text)`` line in that size)."""
    pdf = FPDF()
    if user_password is not None:
        pdf.set_encryption(owner_password="owner-" + user_password, user_password=user_password)
    for lines in pages:
        pdf.add_page()
        for line in lines:
            size, text = line if isinstance(line, tuple) else (11, line)
            pdf.set_font("helvetica", size=size)
            pdf.cell(0, size * 0.6, text, new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def pdf_table_bytes(
    rows: Sequence[Sequence[str]],
    col_widths: Sequence[int],
    *,
    before: str = "",
    after: str = "",
    borders: bool = True,
    size: int = 10,
) -> bytes:
    """A page with a paragraph, a table (its first row the header; cells wrap over several lines
    where their text is longer than the column, each cell's lines centred in its row) and another
    paragraph, set in ``size`` points."""
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=size)
    if before:
        pdf.multi_cell(0, 5, before, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(4)
    with pdf.table(
        col_widths=tuple(col_widths), line_height=5, borders_layout="ALL" if borders else "NONE"
    ) as table:
        for cells in rows:
            row = table.row()
            for cell in cells:
                row.cell(cell)
    if after:
        pdf.ln(4)
        pdf.multi_cell(0, 5, after, new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def two_column_pdf_bytes(left: str, right: str) -> bytes:
    """A page of two columns of running text side by side, as a newsletter sets them."""
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=10)
    top = pdf.get_y()
    pdf.set_xy(10, top)
    pdf.multi_cell(90, 5, left, align="J")
    pdf.set_xy(110, top)
    pdf.multi_cell(90, 5, right, align="J")
    pdf.set_xy(10, pdf.get_y() + 6)
    pdf.multi_cell(0, 5, "Name: ______________        Date: ___________", new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def scanned_pdf_bytes(pages: int = 2) -> bytes:
    """Pages with only drawn shapes, as a scan without a text layer looks to a text extractor."""
    pdf = FPDF()
    for _ in range(pages):
        pdf.add_page()
        pdf.rect(20, 20, 120, 80, style="F")
    return bytes(pdf.output())


def docx_bytes(blocks: Sequence[tuple[str, str]]) -> bytes:
    """A DOCX: ``("h1", text)`` / ``("h2", text)`` headings, ``("p", text)`` paragraphs."""
    document = docx.Document()
    for kind, text in blocks:
        if kind.startswith("h"):
            document.add_heading(text, level=int(kind[1:]))
        else:
            document.add_paragraph(text)
    stream = io.BytesIO()
    document.save(stream)
    return stream.getvalue()


def zip_bomb_docx(expanded_bytes: int = 200 * 2**20) -> bytes:
    """A DOCX-shaped zip whose document part declares (and would inflate to) ``expanded_bytes``."""
    stream = io.BytesIO()
    with zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        with archive.open("word/document.xml", "w", force_zip64=True) as member:
            block = b"\0" * 2**20
            for _ in range(expanded_bytes // len(block)):
                member.write(block)
    return stream.getvalue()


def project_with(tmp_path: Path, files: dict[str, bytes], **scope: Any) -> Path:
    """A project whose docs/ root holds ``files`` and admits every format (``scope`` overrides)."""
    root = tmp_path / "project"
    docs = root / "docs"
    docs.mkdir(parents=True)
    for name, data in files.items():
        (docs / name).parent.mkdir(parents=True, exist_ok=True)
        (docs / name).write_bytes(data)
    path = write_manifest(root)
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    document["scope"]["allowedContentTypes"] = list(ALL_TYPES)
    document["scope"].update(scope)
    document["sourceRefs"][0]["include"] = ["**/*"]
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return root
