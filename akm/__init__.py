"""The evidence plane: AKM EvidenceRows and EvidencePackets, retrieval, direct reads,
claim verification, the store, the API and the CLI."""

__version__ = "0.1.0"
