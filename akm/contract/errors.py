"""Typed errors of the evidence contract."""

from __future__ import annotations


class ContractError(Exception):
    """Base of every evidence-contract error."""


class ForbiddenTransition(ContractError):
    """A verification state change that §3.1 does not allow."""

    def __init__(self, from_state: str, to_state: str, detail: str = "") -> None:
        self.from_state = from_state
        self.to_state = to_state
        suffix = f": {detail}" if detail else ""
        super().__init__(f"forbidden verification transition {from_state} -> {to_state}{suffix}")


class MissingTransitionEvidence(ContractError):
    """An allowed state change whose required transition evidence (§3.1) was not supplied."""

    def __init__(self, to_state: str, detail: str) -> None:
        self.to_state = to_state
        super().__init__(f"transition to {to_state} lacks its required evidence: {detail}")


class UnreadableDocument(ContractError):
    """An input that cannot be read as a JSON or YAML evidence document at all."""
