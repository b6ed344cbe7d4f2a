"""Benchmark grids on Spark: the grid file, the runner, one task per instance, the Parquet dataset,
the optimum and the report.

``odrp.bench`` is also the API's function :func:`odrp.api.bench`. Importing a submodule such as
``odrp.bench.dataset`` binds the name ``bench`` of the package ``odrp`` to this package, so the package
itself answers a call with that function: ``odrp.bench(grid, out)`` works whatever was imported before.
"""

import sys
import types
from typing import Any


class _CallablePackage(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from odrp.api import bench

        return bench(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
