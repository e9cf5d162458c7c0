"""Fixtures shared across test folders, loaded as pytest plugins by ``tests/conftest.py``."""
