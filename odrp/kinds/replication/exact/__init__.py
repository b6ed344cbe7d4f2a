"""The exact side of ODRP: the compact and the paper's formulations, reductions, bounds and the start."""
