import pytest

from harness.stats import summarize


def test_summary_of_known_sample():
    s = summarize([5, 1, 3, 2, 4])
    assert (s.n, s.median, s.minimum, s.maximum) == (5, 3, 1, 5)
    assert (s.q1, s.q3) == (2, 4)
    assert s.iqr == 2
    assert s.relative_iqr == pytest.approx(2 / 3)


def test_single_sample_has_no_spread():
    s = summarize([7])
    assert s.median == 7 and s.iqr == 0


def test_even_count_median_is_midpoint():
    assert summarize([1, 2, 3, 10]).median == 2.5


def test_empty_sample_is_refused():
    with pytest.raises(ValueError):
        summarize([])
