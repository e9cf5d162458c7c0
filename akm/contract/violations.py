"""One finding of a contract check: which rule, where (JSON Pointer) and why."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Violation:
    """A document breaks rule ``rule_id`` at JSON Pointer ``pointer`` ("" is the document root).

    Schema findings use ``schema:<keyword>`` (project schema) or ``upstream:<keyword>``
    (upstream schema); rule findings use the IDs listed in ``akm.contract.rules``.
    """

    rule_id: str
    pointer: str
    message: str


def json_pointer(*parts: str | int) -> str:
    """RFC 6901 pointer for a path of keys and indices."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in parts)
