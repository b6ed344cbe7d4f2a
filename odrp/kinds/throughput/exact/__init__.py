"""The exact side of the throughput kind: rate models, configuration bounds and the level search."""
