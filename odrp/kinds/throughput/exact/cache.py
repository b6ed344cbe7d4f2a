"""What one solve remembers between calls: fluid models, pricing tables and pools, big checks.

The fluid LP at a fixed rate (:class:`.bounds.FluidModels`), the configuration LP's pricing tables and
pools of configurations (:class:`.config_bound.Tables`) and the answers of P(rho) on tiers of big
components (:class:`.big.BigChecks`) are worth keeping between the LPs and nodes of one search. A
:class:`Cache` holds them for one solve: :func:`odrp.kinds.throughput.exact.solve.solve` makes one and
passes it down, and every worker process of the level search makes its own for the instance it is sent.
Nothing is kept at module level, so two solves in one process share nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from odrp.kinds.throughput.exact.big import BigChecks
from odrp.kinds.throughput.exact.bounds import FluidModels
from odrp.kinds.throughput.exact.config_bound import Tables
from odrp.kinds.throughput.exact.settings import ThroughputSettings


@dataclass
class Cache:
    """The memos of one solve (or of one worker process's instance)."""

    fluid: FluidModels
    """The fluid LPs at fixed rates: the count ranges of P(rho) and of the node LPs."""
    tables: Tables
    """The configuration LP's pricing tables and pools (they share ``fluid``)."""
    big: BigChecks
    """The level search's checks on its big components."""

    @classmethod
    def of(cls, settings: ThroughputSettings = ThroughputSettings()) -> Cache:
        """An empty cache sized by ``settings``."""
        fluid = FluidModels(settings.configuration.fluid_kept)
        return cls(fluid, Tables(settings.configuration, fluid), BigChecks(settings.level_search))
