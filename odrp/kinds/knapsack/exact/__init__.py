"""The exact side of the knapsack family: compact MILP, configuration (pattern) model, arc-flow,
Lagrangian search and the QKP reduction.
"""
