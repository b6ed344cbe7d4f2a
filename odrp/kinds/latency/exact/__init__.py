"""The exact side of the latency kind: the MILP and its class-based decomposition."""
