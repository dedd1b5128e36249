"""Rule family (being written)."""
