"""Typed failures of the service layer, each mapped to one problem type by the API."""

from __future__ import annotations

# The base and the model error are shared with the runtime, which raises the latter.
from akm.errors import ModelUnavailableError, ServiceError


class NotFoundError(ServiceError):
    """The thing does not exist, or exists outside the manifest's scope (never told apart)."""

    def __init__(self, kind: str, identifier: str) -> None:
        self.kind = kind
        self.identifier = identifier
        super().__init__(f"no {kind} {identifier!r}")


class InvalidRequestError(ServiceError):
    """A well-formed request the service cannot act on (e.g. a question over the length limit)."""


class ServiceUnavailableError(ServiceError):
    """A part of the service this deployment cannot run (e.g. a pipeline that is not installed)."""


class StoreUnavailableError(ServiceError):
    """The evidence store cannot be reached."""


class GenerationBusyError(ServiceError):
    """Every generation slot stayed busy for the whole wait."""

    def __init__(self, limit: int, waited_s: float) -> None:
        self.limit = limit
        self.waited_s = waited_s
        super().__init__(f"all {limit} generation slot(s) stayed busy for {waited_s:g} s")


class GenerationCancelledError(ServiceError):
    """The client went away; generation stopped and nothing was stored."""


__all__ = [
    "GenerationBusyError",
    "GenerationCancelledError",
    "InvalidRequestError",
    "ModelUnavailableError",
    "NotFoundError",
    "ServiceError",
    "ServiceUnavailableError",
    "StoreUnavailableError",
]
