"""Exact operator replication and placement for stream processing, and heuristics scored against it.

Data flows one way: instance JSON -> problem (validated) -> method (exact model or heuristic)
-> solution -> evaluator -> Result. See DESIGN.md for the contracts.
"""

__version__ = "0.1.0"
