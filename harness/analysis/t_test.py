"""Welch's t-test and the Student t distribution it needs, in pure Python.

The sessions that judge (report, compare, bisect, triage) install the harness's report extra, which
has no scipy, and this code agrees with scipy's t distribution to 1e-12
(``tests/analysis/test_t_test.py``): adding scipy for one tail would add tens of MB to every such
session for nothing.  Welch's degrees of freedom are not whole numbers, so the t distribution's tail
comes from the regularised incomplete beta function: for t ≥ 0, P(T > t) = ½·I_x(ν/2, ½) with x = ν
/ (ν + t²). The incomplete beta is evaluated by its continued fraction (modified Lentz), on the side
of the mean where the fraction converges fast.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

_EPSILON = 1e-15
_TINY = 1e-300  # keeps Lentz's method away from a division by zero
_MAX_TERMS = 10_000


def _beta_fraction(x: float, a: float, b: float) -> float:
    """The continued fraction of I_x(a, b) for x below (a + 1) / (a + b + 2), where it is fast."""
    c = 1.0
    d = 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    fraction = d
    for m in range(1, _MAX_TERMS):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            step = c * d
            fraction *= step
        if abs(step - 1.0) < _EPSILON:
            return fraction
    raise ArithmeticError(f"the incomplete beta fraction did not converge for x={x}, a={a}, b={b}")


def regularized_incomplete_beta(x: float, a: float, b: float) -> float:
    """I_x(a, b) = B(x; a, b) / B(a, b), for 0 ≤ x ≤ 1 and a, b > 0."""
    if not (a > 0 and b > 0):
        raise ValueError(f"the incomplete beta needs a, b > 0, not {a}, {b}")
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"the incomplete beta needs 0 ≤ x ≤ 1, not {x}")
    if x in (0.0, 1.0):
        return x
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1) / (a + b + 2):
        return math.exp(log_front) * _beta_fraction(x, a, b) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(1.0 - x, b, a) / b


def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| ≥ |t|) for Student's t with ``df`` (any positive real) degrees of freedom."""
    if not df > 0:
        raise ValueError(f"degrees of freedom must be positive, not {df}")
    if math.isinf(t):
        return 0.0
    if math.isinf(df):  # the t distribution's limit: the standard normal
        return math.erfc(abs(t) / math.sqrt(2))
    return regularized_incomplete_beta(df / (df + t * t), df / 2, 0.5)


def t_survival(t: float, df: float) -> float:
    """P(T > t), as scipy.stats.t.sf."""
    tail = t_two_sided_p(t, df) / 2
    return tail if t >= 0 else 1.0 - tail


# A watch sizing each benchmark asks the same few (level, processes) pairs thousands of times.
@functools.lru_cache(maxsize=4096)
def t_quantile(q: float, df: float) -> float:
    """The t with P(T ≤ t) = ``q``, as scipy.stats.t.ppf: bisection on ``t_survival``."""
    if not 0 < q < 1:
        raise ValueError(f"a quantile needs 0 < q < 1, not {q}")
    low, high = -1.0, 1.0
    while t_survival(low, df) < 1 - q:
        low *= 2
    while t_survival(high, df) > 1 - q:
        high *= 2
    # about 50 halvings: the quantile to double precision's reach
    while high - low > 1e-12 * max(1.0, abs(high)):
        middle = (low + high) / 2
        if t_survival(middle, df) > 1 - q:
            low = middle
        else:
            high = middle
    return (low + high) / 2


@dataclass(frozen=True)
class WelchTest:
    t: float  # of the second sample against the first: positive when its mean is larger
    df: float  # Welch–Satterthwaite degrees of freedom
    p_value: float  # two-sided
    difference: float = math.nan  # of the means, second less first
    error: float = math.nan  # the standard error of that difference


def welch_t_test(
    first: Sequence[float], second: Sequence[float], *, known_variance: float = 0.0
) -> WelchTest:
    """Welch's unequal-variance t-test of ``second`` against ``first`` (as scipy's
    ``ttest_ind(second, first, equal_var=False)``). ``known_variance`` is added to the variance of
    the difference of the means: a source of spread the samples cannot show (e.g. each side's whole
    run sitting at a level of its own), taken as known, so it adds no uncertainty of its own to the
    degrees of freedom, which stay Welch–Satterthwaite's over the estimated shares. Two samples
    without any spread are told apart exactly: p is 0 when their means differ and 1 when they agree
    (scipy gives nan there)."""
    n1, n2 = len(first), len(second)
    if n1 < 2 or n2 < 2:
        raise ValueError(f"Welch's t-test needs at least two values a side, not {n1} and {n2}")
    if not known_variance >= 0:
        raise ValueError(f"a known variance cannot be negative, not {known_variance}")
    mean1, mean2 = statistics.fmean(first), statistics.fmean(second)
    share1, share2 = statistics.variance(first) / n1, statistics.variance(second) / n2
    error = share1 + share2 + known_variance
    if error == 0:
        difference = mean2 - mean1
        t = math.copysign(math.inf, difference) if difference else 0.0
        return WelchTest(t, n1 + n2 - 2.0, 0.0 if difference else 1.0, difference, 0.0)
    t = (mean2 - mean1) / math.sqrt(error)
    estimated = share1**2 / (n1 - 1) + share2**2 / (n2 - 1)
    df = error**2 / estimated if estimated else math.inf
    return WelchTest(t, df, t_two_sided_p(t, df), mean2 - mean1, math.sqrt(error))
