"""The failures any layer may raise and the service reports by type: the base of the service's
typed errors, and the one error for a model that cannot be loaded or run.

They live at the bottom of the package so that the runtime, which loads the models, and the
service and API, which report the failure, share one class; ``akm.service.errors`` re-exports
both beside the service's own errors.
"""

from __future__ import annotations


class ServiceError(Exception):
    """Base of every failure the service layer reports on purpose."""


class ModelUnavailableError(ServiceError):
    """A model the pipeline needs (target, draft, embedding or NLI) cannot be loaded or run.

    ``kind``, ``name`` and ``reason`` are set when the error names a configured model
    (:meth:`could_not_load`); the message is always complete on its own.
    """

    def __init__(
        self, message: str, *, kind: str | None = None, name: str | None = None, reason: str | None = None
    ) -> None:
        self.kind = kind
        self.name = name
        self.reason = reason
        super().__init__(message)

    @classmethod
    def could_not_load(cls, kind: str, name: str, reason: str) -> ModelUnavailableError:
        return cls(
            f"the {kind} model {name!r} could not be loaded: {reason}", kind=kind, name=name, reason=reason
        )


__all__ = ["ModelUnavailableError", "ServiceError"]
