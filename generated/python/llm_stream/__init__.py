"""LLM-Stream 1.0 bindings (placeholder until the generator writes this package)."""
