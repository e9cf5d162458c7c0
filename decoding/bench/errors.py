"""The one error every benchmark raises for input it cannot use, and the optional-extra check."""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

BENCH_EXTRA_HINT = "install the bench extra: pip install 'akm-evidence[bench]'"


class BenchmarkInputError(ValueError):
    """A benchmark's input is missing, unreadable or not in the form it expects, or the run it
    asks for cannot be made (an unknown method, a backend that is not available)."""


class BenchmarkExtraMissingError(BenchmarkInputError):
    """A package of the optional ``bench`` extra (matplotlib, pgserver) is not installed."""

    def __init__(self, package: str, purpose: str) -> None:
        self.package = package
        super().__init__(f"{purpose} needs {package}; {BENCH_EXTRA_HINT}")


def require_bench_extra(package: str, purpose: str) -> None:
    """Raise BenchmarkExtraMissingError unless ``package`` can be imported; imports nothing, so a
    command can check before a long run rather than fail at its end."""
    if importlib.util.find_spec(package) is None:
        raise BenchmarkExtraMissingError(package, purpose)


def import_bench_extra(package: str, purpose: str) -> ModuleType:
    """Import a package of the ``bench`` extra, or raise BenchmarkExtraMissingError saying so."""
    try:
        return importlib.import_module(package)
    except ModuleNotFoundError as error:
        if error.name is not None and error.name.split(".")[0] == package.split(".")[0]:
            raise BenchmarkExtraMissingError(package, purpose) from error
        raise


__all__ = [
    "BENCH_EXTRA_HINT",
    "BenchmarkExtraMissingError",
    "BenchmarkInputError",
    "import_bench_extra",
    "require_bench_extra",
]
