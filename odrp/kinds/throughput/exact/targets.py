"""The rates the rate search decides next: bisection between incumbent and bound, or just above the incumbent.

While the bound is far from the incumbent R_inc, a target bisects between them: R_inc + reach (bound -
R_inc). Once they are within ``wide`` (relative), or a bisection step would be no larger than that, the
target is R_inc (1 + g/2), whose refutation proves R_inc optimal within the gap g. P(rho) rounds use the
rate search's ``wide``; level searches use ``level_wide`` (:class:`Targets`).
"""

from __future__ import annotations


def bisecting(best: float, upper: float, reach: float, wide: float) -> bool:
    """Whether the bound ``upper`` is far enough (more than ``wide``) to bisect between incumbent and bound."""
    return upper > best * (1 + wide) and reach * (upper - best) > wide * best


def target(best: float, upper: float, reach: float, gap: float, wide: float) -> float:
    """The next rate to decide: the bisection point while the bound is more than ``wide`` away, else within the
    gap."""
    return best + reach * (upper - best) if bisecting(best, upper, reach, wide) else best * (1 + gap / 2)


class Targets:
    """The rates a level search decides as a function of the incumbent's rate (:func:`target` with
    ``level_wide``), and :meth:`stalled`, the rate a stalled search rises to."""

    def __init__(self, upper: float, reach: float, gap: float, level_wide: float) -> None:
        self.upper, self.reach, self.gap, self.level_wide = upper, reach, gap, level_wide
        self.bisecting = True
        """Whether the last target was a bisection target (not the last one, within the gap)."""

    def __call__(self, rate_now: float) -> float:
        self.bisecting = bisecting(rate_now, self.upper, self.reach, self.level_wide)
        return target(rate_now, self.upper, self.reach, self.gap, self.level_wide)

    def stalled(self, rho: float) -> float | None:
        """The rate a search that found nothing for a while rises to: halfway to the bound, when its target was
        a bisection target and the bound is more than ``level_wide`` above rho; else None (the last target,
        within the gap, is never raised: raised, it would only prove a rate above the next proof).

        A bisection target just below R* is the worst case of the level search: it can only end by finding a
        placement in the thin band [rho, R*], and where depth-first search meets one depends on the LP's
        degenerate lambda shares. Raised, the search becomes a proof at a rate above R* (it ends; nothing
        decided is lost, as after a new incumbent: nodes refuted at a rate stay refuted at a higher one) and the
        next search bisects below the new bound."""
        if not self.bisecting or self.upper <= rho * (1 + self.level_wide):
            return None
        return rho + 0.5 * (self.upper - rho)
