"""The exact side of the pathmap kind: the path-based MILP."""
