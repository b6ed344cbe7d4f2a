"""Benchmark grids on Spark: the grid file, the runner, one task per instance, the Parquet dataset,
the optimum and the report.
"""
