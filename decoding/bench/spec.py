"""Names the decoding benchmark accepts, kept apart from the benchmark itself so that a command line
can offer them without importing torch."""

FORMATS = ("spec-bench", "squad")
METHODS = ("plain", "prompt-lookup", "evidence", "speculative", "hf-plain", "hf-pld")
