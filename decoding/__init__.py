"""Exact speculative decoding for Hugging Face causal language models.

Self-contained: nothing here knows about evidence, claims or the store.
"""
