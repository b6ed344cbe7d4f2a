"""Latency-aware placement in the compute continuum (Ecker et al.): kind ``latency``."""
