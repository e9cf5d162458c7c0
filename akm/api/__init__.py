"""The REST API: grounded answers, audits over evidence lineage, operations endpoints."""

from akm.api.app import create_app
from akm.api.limits import ApiLimits
from akm.api.wiring import ApiServices, StoreHandle

__all__ = ["ApiLimits", "ApiServices", "StoreHandle", "create_app"]
