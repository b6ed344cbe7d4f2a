"""Discrete-event simulations of stream-processing platforms (one module per paper)."""
