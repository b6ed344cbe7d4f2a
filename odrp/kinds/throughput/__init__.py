"""Max-throughput scheduling on heterogeneous Storm clusters (Nasiri et al. 2023): kind ``throughput``."""
