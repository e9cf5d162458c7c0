"""Benchmark programs: each builds its inputs, measures, prints a table and writes JSON."""
