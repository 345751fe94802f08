"""Everything that writes: one module per subject (tables.py, hands.py)."""
