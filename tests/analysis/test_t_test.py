"""Welch's t-test and the Student t tail, against scipy's values and closed forms.

Reference values were computed once with scipy 1.18.1 (``scipy.stats.t.sf``,
``scipy.special.betainc``, ``scipy.stats.ttest_ind(..., equal_var=False)``) and are
quoted here; scipy itself is not a dependency.
"""

import math
import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.analysis.t_test import (
    regularized_incomplete_beta,
    t_quantile,
    t_survival,
    t_two_sided_p,
    welch_t_test,
)

# (t, degrees of freedom, scipy.stats.t.sf(t, df)); Welch's df are not whole numbers.
T_SURVIVAL = [
    (0.0, 1, 0.5),
    (1.0, 1, 0.25000000000000006),
    (2.5, 3, 0.04385332350403278),
    (4.5, 8, 0.0010010461377592988),
    (10.0, 2.7, 0.001643828032344596),
    (3.3, 17.25, 0.002082221009195226),
    (0.25, 40.5, 0.4019255718565345),
    (6.0, 4.2, 0.0016582928302240898),
    (1.96, 10000.0, 0.025011760115916513),
    (50.0, 3.0, 8.808576020635984e-06),
    (12.0, 8.5, 6.377188259563394e-07),
]


@pytest.mark.parametrize(("t", "df", "expected"), T_SURVIVAL)
def test_t_tail_matches_scipy(t, df, expected):
    assert t_survival(t, df) == pytest.approx(expected, rel=1e-6)
    assert t_survival(-t, df) == pytest.approx(1 - expected, rel=1e-6)
    assert t_two_sided_p(t, df) == pytest.approx(min(1.0, 2 * expected), rel=1e-6)


@pytest.mark.parametrize(
    ("t", "df", "tail"),
    # Critical values of the printed tables (scipy.stats.t.isf to full precision).
    [
        (2.2281388519862753, 10, 0.025),
        (4.500790933723724, 8, 0.001),
        (8.610301581379275, 4, 0.0005),
    ],
)
def test_critical_values_of_the_tables(t, df, tail):
    assert t_survival(t, df) == pytest.approx(tail, rel=1e-6)


@given(st.floats(min_value=-1e4, max_value=1e4, allow_nan=False))
def test_one_and_two_degrees_of_freedom_have_closed_forms(t):
    # df = 1 is the Cauchy distribution; df = 2 has P(T > t) = ½ − t / (2·√(2 + t²)).
    assert t_survival(t, 1) == pytest.approx(0.5 - math.atan(t) / math.pi, rel=1e-6, abs=1e-12)
    assert t_survival(t, 2) == pytest.approx(
        0.5 - t / (2 * math.sqrt(2 + t * t)), rel=1e-6, abs=1e-12
    )


def test_many_degrees_of_freedom_approach_the_normal():
    normal = 0.5 * math.erfc(1.96 / math.sqrt(2))
    assert t_survival(1.96, 1e7) == pytest.approx(normal, rel=1e-5)
    assert t_survival(1.96, 30) > t_survival(1.96, 1e7), (
        "heavier tails with fewer degrees of freedom"
    )


@pytest.mark.parametrize(
    ("x", "a", "b", "expected"),
    [
        (0.3, 2.0, 3.0, 0.34829999999999994),
        (0.9, 0.5, 0.5, 0.7951672353008665),
        (0.01, 4.0, 0.5, 2.7453813514248094e-09),
        (0.999, 8.5, 0.5, 0.8977421798007894),
        (0.5, 30.0, 0.5, 1.3302059355529255e-10),
        (0.2, 1.5, 7.25, 0.6581585908788302),
    ],
)
def test_incomplete_beta_matches_scipy(x, a, b, expected):
    assert regularized_incomplete_beta(x, a, b) == pytest.approx(expected, rel=1e-6)


def test_incomplete_beta_by_hand():
    # I_x(1, 1) = x.  For whole a, b: I_x(a, b) = P(at least a of a + b − 1 trials succeed), so
    # I_x(2, 3) = 6x²(1 − x)² + 4x³(1 − x) + x⁴; at 0.3: 0.2646 + 0.0756 + 0.0081 = 0.3483.
    assert regularized_incomplete_beta(0.37, 1, 1) == pytest.approx(0.37)
    assert regularized_incomplete_beta(0.3, 2, 3) == pytest.approx(0.3483)
    assert (regularized_incomplete_beta(0.0, 2, 3), regularized_incomplete_beta(1.0, 2, 3)) == (
        0.0,
        1.0,
    )


@pytest.mark.parametrize(("x", "a", "b"), [(-0.1, 1, 1), (1.5, 1, 1), (0.5, 0, 1), (0.5, 1, -2)])
def test_incomplete_beta_refuses_what_it_cannot_be(x, a, b):
    with pytest.raises(ValueError):
        regularized_incomplete_beta(x, a, b)


def test_t_tail_refuses_nonpositive_degrees_of_freedom():
    with pytest.raises(ValueError):
        t_survival(1.0, 0)


def test_welch_matches_scipy():
    first, second = [1.02, 0.98, 1.05, 0.99, 1.01], [1.20, 1.15, 1.22, 1.30, 1.11, 1.18]
    result = welch_t_test(first, second)
    assert result.t == pytest.approx(6.271905694468946, rel=1e-9)
    assert result.df == pytest.approx(6.961492075394849, rel=1e-9)
    assert result.p_value == pytest.approx(0.0004246064834198818, rel=1e-6)
    small = welch_t_test([3.1, 3.4, 2.9], [3.3, 3.9, 3.6])
    assert (small.t, small.df) == (
        pytest.approx(2.0641873861685585),
        pytest.approx(3.88256880733945),
    )
    assert small.p_value == pytest.approx(0.110047865547068, rel=1e-6)


def test_welch_is_antisymmetric():
    forward, backward = (
        welch_t_test([1, 2, 3, 4], [2, 4, 5, 9]),
        welch_t_test([2, 4, 5, 9], [1, 2, 3, 4]),
    )
    assert (
        forward.t == -backward.t
        and forward.df == backward.df
        and forward.p_value == backward.p_value
    )


def test_welch_without_any_spread_is_exact():
    assert welch_t_test([2.0, 2.0], [2.0, 2.0, 2.0]).p_value == 1.0
    apart = welch_t_test([2.0, 2.0], [3.0, 3.0])
    assert apart.p_value == 0.0 and apart.t == math.inf
    assert welch_t_test([3.0, 3.0], [2.0, 2.0]).t == -math.inf


def test_welch_needs_two_values_a_side():
    with pytest.raises(ValueError, match="at least two values a side, not 1 and 3"):
        welch_t_test([1.0], [1.0, 2.0, 3.0])


@pytest.mark.parametrize(
    ("q", "df", "expected"),
    # scipy.stats.t.ppf(q, df)
    [
        (0.975, 10, 2.228139),
        (0.999, 8, 4.500791),
        (0.9, 8, 1.396815),
        (0.5, 3, 0.0),
        (0.025, 10, -2.228139),
    ],
)
def test_t_quantile_inverts_the_survival_function(q, df, expected):
    assert t_quantile(q, df) == pytest.approx(expected, abs=1e-5)


def test_a_known_variance_widens_the_test_without_changing_welchs_degrees_of_freedom():
    first, second = [1.02, 0.98, 1.05, 0.99, 1.01], [1.20, 1.15, 1.22, 1.30, 1.11, 1.18]
    plain, widened = welch_t_test(first, second), welch_t_test(first, second, known_variance=0.01)
    share = plain.t**2  # t² = difference² / error: the error grows by the known variance
    difference = statistics.fmean(second) - statistics.fmean(first)
    assert widened.t == pytest.approx(difference / math.sqrt(difference**2 / share + 0.01))
    assert widened.p_value > plain.p_value and widened.df > plain.df
    with pytest.raises(ValueError, match="negative"):
        welch_t_test(first, second, known_variance=-1e-9)


def test_a_known_variance_alone_gives_the_normal_tail():
    # No spread in the samples: the whole error is the known variance, taken as exact, so t is
    # normal.
    found = welch_t_test([2.0, 2.0], [2.2, 2.2], known_variance=0.01)
    assert (found.t, found.df) == (pytest.approx(2.0), math.inf)
    assert found.p_value == pytest.approx(0.0455003, rel=1e-5)  # 2 · (1 − Φ(2))
