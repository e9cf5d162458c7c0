"""The ingest progress display: a redrawn bar on a terminal, throttled plain lines elsewhere."""

from __future__ import annotations

import io

import pytest

from akm.cli.ingest import (
    LOG_INTERVAL_S,
    REDRAW_INTERVAL_S,
    ProgressDisplay,
    format_duration,
    log_line,
    progress_bar,
    terminal_line,
)
from akm.ingest import IngestProgress


class TerminalBuffer(io.StringIO):
    def isatty(self) -> bool:
        return True


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def snapshot(
    done: int,
    elapsed: float,
    *,
    total: int | None = 200,
    phase: str = "scan",
    unit: str = "files",
    written: int = 20,
    chunks: int = 160,
    embedded: int = 150,
) -> IngestProgress:
    return IngestProgress(
        phase=phase,
        files_done=done,
        files_written=written,
        chunks_written=chunks,
        elapsed_s=elapsed,
        total=total,
        embedded=embedded,
        unit=unit,
    )


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.0, "0:00"), (0.4, "0:00"), (59.6, "1:00"), (61.0, "1:01"), (3725.0, "1:02:05"), (-3.0, "0:00")],
    ids=["zero", "rounds-down", "rounds-up", "minute", "hours", "negative"],
)
def test_format_duration(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


@pytest.mark.parametrize(
    ("fraction", "bar"),
    [
        (0.0, "[--------------------]"),
        (0.25, "[#####---------------]"),
        (0.999, "[###################-]"),
        (1.0, "[####################]"),
    ],
    ids=["empty", "quarter", "almost-full-is-not-full", "full"],
)
def test_progress_bar_width_is_fixed(fraction: float, bar: str) -> None:
    assert progress_bar(fraction) == bar
    assert len(progress_bar(fraction, 10)) == 12


@pytest.mark.parametrize(
    ("progress", "terminal", "log"),
    [
        (
            snapshot(50, 10.0),
            "[#####---------------]  25% 50/200 files scanned | 5.0 files/s | ETA 0:30 | "
            "20 written, 160 chunks, 150 embedded",
            "ingest: 50/200 files scanned (25%), 20 written, 160 chunks, 150 embedded, 5.0 files/s, ETA 0:30",
        ),
        (
            snapshot(0, 0.0, written=0, chunks=0, embedded=0),
            "[--------------------]   0% 0/200 files scanned | 0.0 files/s | ETA --:-- | "
            "0 written, 0 chunks, 0 embedded",
            "ingest: 0/200 files scanned (0%), 0 written, 0 chunks, 0 embedded, 0.0 files/s, ETA --:--",
        ),
        (
            snapshot(5, 0.5),
            "[--------------------]   2% 5/200 files scanned | 10.0 files/s | ETA --:-- | "
            "20 written, 160 chunks, 150 embedded",
            "ingest: 5/200 files scanned (2%), 20 written, 160 chunks, 150 embedded, 10.0 files/s, ETA --:--",
        ),
        (
            snapshot(1000, 8.0, total=5183, unit="documents"),
            "[###-----------------]  19% 1000/5183 documents scanned | 125.0 documents/s | ETA 0:33 | "
            "20 written, 160 chunks, 150 embedded",
            "ingest: 1000/5183 documents scanned (19%), 20 written, 160 chunks, 150 embedded, "
            "125.0 documents/s, ETA 0:33",
        ),
        (
            snapshot(200, 65.0, phase="done"),
            "[####################] 100% 200/200 files scanned | 3.1 files/s | done in 1:05 | "
            "20 written, 160 chunks, 150 embedded",
            "ingest: 200/200 files scanned (100%), 20 written, 160 chunks, 150 embedded, 3.1 files/s, "
            "done in 1:05",
        ),
        (
            snapshot(120, 10.0, total=None),
            "120 files scanned | 12.0 files/s | 0:10 elapsed | 20 written, 160 chunks, 150 embedded",
            "ingest: 120 files scanned, 20 written, 160 chunks, 150 embedded, 12.0 files/s, 0:10 elapsed",
        ),
        (
            snapshot(0, 0.5, total=0, phase="done", written=0, chunks=0, embedded=0),
            "[####################] 100% 0/0 files scanned | 0.0 files/s | done in 0:00 | "
            "0 written, 0 chunks, 0 embedded",
            "ingest: 0/0 files scanned (100%), 0 written, 0 chunks, 0 embedded, 0.0 files/s, done in 0:00",
        ),
    ],
    ids=[
        "quarter",
        "start",
        "no-eta-in-the-first-second",
        "corpus-documents",
        "done",
        "no-total",
        "nothing-to-do",
    ],
)
def test_line_texts(progress: IngestProgress, terminal: str, log: str) -> None:
    assert terminal_line(progress) == terminal
    assert log_line(progress) == log


def test_terminal_redraws_one_line_and_ends_it_when_done() -> None:
    stream, clock = TerminalBuffer(), FakeClock()
    display = ProgressDisplay(stream, clock=clock, columns=200)
    display(snapshot(50, 10.0))
    clock.now += REDRAW_INTERVAL_S / 2
    display(snapshot(51, 10.05))  # too soon: not drawn
    clock.now += REDRAW_INTERVAL_S
    display(snapshot(100, 10.0))
    clock.now += 0.01
    display(snapshot(200, 20.0, phase="done"))
    first = terminal_line(snapshot(50, 10.0))
    second = terminal_line(snapshot(100, 10.0))
    last = terminal_line(snapshot(200, 20.0, phase="done"))
    assert stream.getvalue() == f"\r{first}\r{second}\r{last}\n"
    assert second == (
        "[##########----------]  50% 100/200 files scanned | 10.0 files/s | ETA 0:10 | "
        "20 written, 160 chunks, 150 embedded"
    )


def test_shorter_redraw_is_padded_over_the_previous_line() -> None:
    stream, clock = TerminalBuffer(), FakeClock()
    display = ProgressDisplay(stream, clock=clock, columns=200)
    display(snapshot(150, 10.0, written=12345))
    clock.now += 1.0
    display(snapshot(160, 10.0, written=1))
    first = terminal_line(snapshot(150, 10.0, written=12345))
    second = terminal_line(snapshot(160, 10.0, written=1))
    assert len(first) - len(second) == 4
    assert stream.getvalue() == f"\r{first}\r{second}    "


def test_terminal_line_is_cut_to_the_width() -> None:
    stream = TerminalBuffer()
    ProgressDisplay(stream, clock=FakeClock(), columns=41)(snapshot(50, 10.0))
    # One column is left free: a line as wide as the terminal would wrap.
    assert stream.getvalue() == "\r[#####---------------]  25% 50/200 files"


def test_log_lines_are_throttled_but_the_last_is_always_written() -> None:
    stream, clock = io.StringIO(), FakeClock()
    display = ProgressDisplay(stream, clock=clock)
    display(snapshot(10, 1.0))
    clock.now += LOG_INTERVAL_S - 0.5
    display(snapshot(20, 2.0))  # too soon
    clock.now += 0.5
    display(snapshot(30, 3.0))
    clock.now += 0.1
    display(snapshot(200, 4.0, phase="done"))
    display.close()  # no open line: writes nothing
    assert stream.getvalue().splitlines() == [
        "ingest: 10/200 files scanned (5%), 20 written, 160 chunks, 150 embedded, 10.0 files/s, ETA 0:19",
        "ingest: 30/200 files scanned (15%), 20 written, 160 chunks, 150 embedded, 10.0 files/s, ETA 0:17",
        "ingest: 200/200 files scanned (100%), 20 written, 160 chunks, 150 embedded, 50.0 files/s, "
        "done in 0:04",
    ]
    assert "\r" not in stream.getvalue()


def test_close_ends_an_interrupted_terminal_line() -> None:
    stream = TerminalBuffer()
    display = ProgressDisplay(stream, clock=FakeClock(), columns=200)
    display(snapshot(50, 10.0))
    display.close()
    display.close()
    assert stream.getvalue() == f"\r{terminal_line(snapshot(50, 10.0))}\n"


def test_interactive_flag_overrides_the_stream() -> None:
    stream = io.StringIO()
    ProgressDisplay(stream, interactive=True, clock=FakeClock(), columns=200)(snapshot(50, 10.0))
    assert stream.getvalue().startswith("\r[#####")
