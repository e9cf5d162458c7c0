"""The AKM evidence contract: models, identities, the verification state machine, builders,
schemas and the rule checker for what JSON Schema cannot express."""
