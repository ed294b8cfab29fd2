"""The difference between two methods with its confidence interval.

``paired_difference`` pairs the two methods' scores by unit (seed): d_i = a_i - b_i, and gives
mean(d) ± t_{(1+c)/2, n-1} · sd(d) / sqrt(n), Student's t interval for the mean paired difference
over n >= 2 units. A baseline with a single score (a deterministic row such as the untrained model)
is paired with every unit. With fewer than two pairs there is no interval, and no difference is stated.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class Difference:
    """Mean paired difference ``estimate`` with its interval [``low``, ``high``] over ``n`` units."""

    estimate: float
    low: float
    high: float
    n: int
    confidence: float = 0.95

    @property
    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0

    def __format__(self, spec: str) -> str:
        """``f"{d:.1f}"`` -> ``+16.3 [+12.3, +20.2]``."""
        spec = spec or ".2f"
        return f"{self.estimate:+{spec}} [{self.low:+{spec}}, {self.high:+{spec}}]".replace("-", "−")


def paired_difference(
    a: Mapping[object, float], b: Mapping[object, float], confidence: float = 0.95
) -> Difference | None:
    """Scores of two methods by unit (seed -> score); None when fewer than two units pair up."""
    units = [u for u in a if u in b] if len(b) > 1 else list(a)
    if len(units) < 2:
        return None
    base = {u: b[u] if len(b) > 1 else next(iter(b.values())) for u in units}
    d = np.array([a[u] - base[u] for u in units], dtype=float)
    half = stats.t.ppf((1 + confidence) / 2, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d))
    return Difference(float(d.mean()), float(d.mean() - half), float(d.mean() + half), len(d), confidence)


def comparison(name: str, baseline: str, difference: Difference | None, unit: str = "seeds", digits: int = 1) -> str:
    """The sentence a report states for a difference: ``crop 10% vs SimCSE: +16.3 [+12.3, +20.2]
    (paired over 3 seeds, 95% t-interval), excludes zero``, or why no difference is stated."""
    if difference is None:
        return f"{name} vs {baseline}: fewer than two {unit}, so no interval and no difference stated"
    verdict = "excludes zero" if difference.excludes_zero else "includes zero: not a measurable difference"
    return (
        f"{name} vs {baseline}: {difference:.{digits}f} (paired over {difference.n} {unit}, "
        f"{difference.confidence:.0%} t-interval), {verdict}"
    )
