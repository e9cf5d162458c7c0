"""Retrieval lanes, query classification and the orchestration that runs them."""
